/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPreDeploymentSurge(t *testing.T) {
	tests := []struct {
		name     string
		replicas int64
		mods     []func(map[string]any)
		surge    int64
		canary   bool
	}{
		{"default 25% rounds up", 3, nil, 1, true},
		{"percent", 10, []func(map[string]any){preWithMaxSurge("50%")}, 5, true},
		{"int", 4, []func(map[string]any){preWithMaxSurge(int64(2))}, 2, true},
		{"zero: the canary takes an old pod's place", 4, []func(map[string]any){preWithMaxSurge(int64(0))}, 0, false},
		{"zero percent", 4, []func(map[string]any){preWithMaxSurge("0%")}, 0, false},
		{"recreate", 4, []func(map[string]any){func(o map[string]any) {
			_ = unstructured.SetNestedField(o, "Recreate", "spec", "strategy", "type")
		}}, 0, true},
	}
	for _, tt := range tests {
		d := preDeploy("gateway", tt.replicas, nil, tt.mods...)
		surge, canary := preDeploymentSurge(d, tt.replicas)
		if surge != tt.surge || canary != tt.canary {
			t.Errorf("%s: surge %d canary %v, want %d %v", tt.name, surge, canary, tt.surge, tt.canary)
		}
	}
}
