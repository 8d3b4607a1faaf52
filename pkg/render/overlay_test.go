/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"strings"
	"testing"
)

func TestImageVersion(t *testing.T) {
	tests := []struct {
		name, ref, want string
	}{
		{name: "tag", ref: "docker.io/library/postgres:16.4", want: "16.4"},
		{name: "registry port, no tag", ref: "registry:5000/redis", want: "latest"},
		{name: "registry port and tag", ref: "registry:5000/redis:7.4.1", want: "7.4.1"},
		{name: "tag and digest", ref: "redis:7.4.1@sha256:0123456789abcdef0123", want: "7.4.1"},
		{name: "digest only", ref: "redis@sha256:0123456789abcdef0123", want: "0123456789ab"},
		{name: "long tag cut to a label value", ref: "x:" + strings.Repeat("a", 70) + "-", want: strings.Repeat("a", 63)},
		{name: "tag ending in a separator once cut", ref: "x:" + strings.Repeat("a", 62) + "-b", want: strings.Repeat("a", 62)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := imageVersion(tc.ref); got != tc.want {
				t.Errorf("imageVersion(%q) = %q, want %q", tc.ref, got, tc.want)
			}
		})
	}
}
