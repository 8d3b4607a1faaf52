/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"testing"
	"time"
)

// TestSoakDuration: a soak asked for is kept as it is; a soak of 0 still watches what
// minReadySeconds leaves of one crash-loop window, and nothing once it covers it.
func TestSoakDuration(t *testing.T) {
	tests := []struct {
		soak       time.Duration
		minReady   int64
		want       time.Duration
		wantWindow bool
	}{
		{soak: 30 * time.Second, minReady: 0, want: 30 * time.Second},
		{soak: time.Second, minReady: 10, want: time.Second},
		{soak: 0, minReady: 0, want: 10 * time.Second, wantWindow: true},
		{soak: 0, minReady: 4, want: 6 * time.Second, wantWindow: true},
		{soak: 0, minReady: 10, want: 0, wantWindow: true},
		{soak: 0, minReady: 60, want: 0, wantWindow: true},
	}
	for _, tc := range tests {
		got, window := soakDuration(tc.soak, tc.minReady)
		if got != tc.want || window != tc.wantWindow {
			t.Errorf("soakDuration(%s, minReadySeconds %d) = %s, %v; want %s, %v", tc.soak, tc.minReady, got, window, tc.want, tc.wantWindow)
		}
	}
}
