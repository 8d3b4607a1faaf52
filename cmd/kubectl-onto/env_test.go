/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import "testing"

// TestEnvValueReadsTheDeprecatedName: ONTO_X first, else KUBECTL_ONTO_X, the name the
// render cache and profile variables had before the one prefix.
func TestEnvValueReadsTheDeprecatedName(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"new name", map[string]string{"ONTO_RENDER_CACHE": "off"}, "off"},
		{"deprecated name", map[string]string{"KUBECTL_ONTO_RENDER_CACHE": "off"}, "off"},
		{"the new name wins", map[string]string{"ONTO_RENDER_CACHE": "on", "KUBECTL_ONTO_RENDER_CACHE": "off"}, "on"},
		{"neither", map[string]string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := envValue(func(k string) string { return tc.env[k] }, RenderCacheEnv); got != tc.want {
				t.Errorf("envValue = %q, want %q", got, tc.want)
			}
		})
	}
}
