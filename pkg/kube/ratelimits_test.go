/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestShareRateLimits: n sharers get n times New's limits, or n times the config's own
// when it sets them; the config passed in is not changed.
func TestShareRateLimits(t *testing.T) {
	tests := []struct {
		name  string
		cfg   rest.Config
		n     int
		qps   float32
		burst int
	}{
		{"defaults, 4 platforms", rest.Config{}, 4, 4 * DefaultQPS, 4 * DefaultBurst},
		{"the config's own limits", rest.Config{QPS: 10, Burst: 20}, 3, 30, 60},
		{"one platform", rest.Config{}, 1, DefaultQPS, DefaultBurst},
		{"zero is one", rest.Config{}, 0, DefaultQPS, DefaultBurst},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.cfg
			got := ShareRateLimits(&in, tc.n)
			if got.QPS != tc.qps || got.Burst != tc.burst {
				t.Errorf("QPS, burst = %v, %d; want %v, %d", got.QPS, got.Burst, tc.qps, tc.burst)
			}
			if in.QPS != tc.cfg.QPS || in.Burst != tc.cfg.Burst {
				t.Errorf("the config passed in changed to %v, %d", in.QPS, in.Burst)
			}
		})
	}
}
