/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPreQty(t *testing.T) {
	tests := []struct {
		r    corev1.ResourceName
		q    string
		want string
	}{
		{"cpu", "2500m", "2.5"},
		{"cpu", "12", "12.0"},
		{"requests.cpu", "250m", "0.25"},
		{"memory", "16Gi", "16 GiB"},
		{"limits.memory", "1536Mi", "1.5 GiB"},
		{"memory", "256Mi", "256 MiB"},
		{"nvidia.com/gpu", "2", "2"},
		{"pods", "10", "10"},
	}
	for _, tt := range tests {
		if got := preQty(tt.r, resource.MustParse(tt.q)); got != tt.want {
			t.Errorf("preQty(%s, %s) = %q, want %q", tt.r, tt.q, got, tt.want)
		}
	}
}
