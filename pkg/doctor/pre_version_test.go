/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import "testing"

func TestPreServerMinor(t *testing.T) {
	tests := []struct {
		major, minor, git string
		want              int
		ok                bool
	}{
		{"1", "30", "", 30, true},
		{"1", "37+", "", 37, true},
		{"1", "", "v1.31.2-gke.100", 31, true},
		{"", "", "v1.28.0", 28, true},
		{"2", "1", "v2.1.0", 0, false},
		{"1", "x", "garbage", 0, false},
		{"1+", "29", "", 29, true},
		{"1", "037", "", 37, true},
		{"1", "+37", "v1.36.1", 36, true},
		{"", "", "v1.x", 0, false},
		{"", "", "v01.30.0", 0, false},
		{"", "", "V1.30.0", 0, false},
		{"", "", " v1.30rc1 ", 30, true},
	}
	for _, tt := range tests {
		got, ok := preServerMinor(tt.major, tt.minor, tt.git)
		if got != tt.want || ok != tt.ok {
			t.Errorf("preServerMinor(%q, %q, %q) = %d, %v; want %d, %v", tt.major, tt.minor, tt.git, got, ok, tt.want, tt.ok)
		}
	}
}
