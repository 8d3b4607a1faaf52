/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"strings"
	"testing"
)

func TestLoadPatches(t *testing.T) {
	tests := []struct {
		name, data string
		want       int
		wantTarget bool
		wantErr    string
	}{
		{name: "list", data: "- target: {kind: Deployment, name: gateway}\n  patch: |\n    - op: add\n      path: /metadata/annotations/x\n      value: y\n", want: 1, wantTarget: true},
		{name: "smp-docs", data: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gateway}\nspec: {minReadySeconds: 5}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: gateway}\n", want: 2},
		{name: "empty", data: "\n", wantErr: "no patches"},
		{name: "unknown-field", data: "- patch: x\n  targets: {}\n", wantErr: "unknown field"},
		{name: "smp-without-name", data: "apiVersion: v1\nkind: Service\n", wantErr: "needs apiVersion, kind and metadata.name"},
		{name: "empty-entry", data: "- target: {kind: Service}\n", wantErr: "patch 0: patch is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadPatches("p.yaml", []byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "p.yaml") {
					t.Fatalf("LoadPatches = %v, want an error with %q naming the file", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != tc.want {
				t.Fatalf("LoadPatches = %d patches, %v; want %d", len(got), err, tc.want)
			}
			if (got[0].Target != nil) != tc.wantTarget {
				t.Fatalf("target = %+v, want target %v", got[0].Target, tc.wantTarget)
			}
		})
	}
}
