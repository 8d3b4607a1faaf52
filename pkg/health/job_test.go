/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestJobReadiness: a plane waits for a Job until it has completed, and stops on one
// that failed; a Job is waited for without being a workload (no replicas, no upgrade
// step).
func TestJobReadiness(t *testing.T) {
	job := func(conditions ...map[string]any) *unstructured.Unstructured {
		conds := make([]any, len(conditions))
		for i, c := range conditions {
			conds[i] = c
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1",
			"kind":       "Job",
			"metadata":   map[string]any{"name": "minio-setup-0123456789", "namespace": "onto", "generation": int64(1)},
			"spec":       map[string]any{"backoffLimit": int64(6), "template": map[string]any{}},
			"status":     map[string]any{"conditions": conds},
		}}
	}
	tests := []struct {
		name              string
		obj               *unstructured.Unstructured
		wantReady, failed bool
	}{
		{name: "running", obj: job()},
		{name: "complete", obj: job(map[string]any{"type": "Complete", "status": "True"}), wantReady: true},
		{name: "failed", obj: job(map[string]any{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}), failed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !IsJob(tc.obj) || !IsWaitedFor(tc.obj) || IsWorkload(tc.obj) {
				t.Fatalf("IsJob %v, IsWaitedFor %v, IsWorkload %v; want a waited-for Job that is not a workload", IsJob(tc.obj), IsWaitedFor(tc.obj), IsWorkload(tc.obj))
			}
			r := Check(tc.obj)
			if r.Ready != tc.wantReady || r.Failed != tc.failed {
				t.Errorf("Check = %+v, want ready %v, failed %v", r, tc.wantReady, tc.failed)
			}
		})
	}
}
