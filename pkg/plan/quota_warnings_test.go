/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestQuotaWarnings: a rendered hard limit below the live quota's status.used warns,
// naming the quota, the resource, the limit and the usage; a limit at or above the
// usage, a resource not used yet, or a quota not created yet does not.
func TestQuotaWarnings(t *testing.T) {
	quota := func(hard, used map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ResourceQuota",
			"metadata": map[string]any{"name": "tenant", "namespace": "tenant"}, "spec": map[string]any{"hard": hard}}}
		if used != nil {
			u.Object["status"] = map[string]any{"used": used}
		}
		return u
	}
	desired := quota(map[string]any{"requests.cpu": "2", "requests.memory": "4Gi", "pods": int64(10), "limits.cpu": "8"}, nil)
	tests := []struct {
		name string
		live *unstructured.Unstructured
		want []string
	}{
		{"not created yet", nil, nil},
		{"under every limit", quota(nil, map[string]any{"requests.cpu": "1500m", "requests.memory": "4Gi", "pods": "10"}), nil},
		{"over two limits", quota(nil, map[string]any{"requests.cpu": "2500m", "requests.memory": "3Gi", "pods": "12"}), []string{
			"ResourceQuota tenant/tenant: the new hard limit of pods, 10, is below what namespace tenant already uses, 12",
			"ResourceQuota tenant/tenant: the new hard limit of requests.cpu, 2, is below what namespace tenant already uses, 2500m",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live := map[string]*unstructured.Unstructured{}
			if tc.live != nil {
				live[RefOf(desired).key()] = tc.live
			}
			got := quotaWarnings([]*unstructured.Unstructured{desired}, live)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w+": ") || !strings.Contains(got[i], "spec.tenancy.resourceQuota[") {
					t.Errorf("warning %d: %q, want it to start with %q and name the spec field", i, got[i], w)
				}
			}
		})
	}
}
