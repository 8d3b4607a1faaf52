/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestUnstoredPatchWarning: --patch warns that it is not stored only where the command
// asks for it (apply), and never on commands that only read (render, plan).
func TestUnstoredPatchWarning(t *testing.T) {
	patch := filepath.Join("testdata", "patch-gateway.yaml")
	tests := []struct {
		name  string
		files FileFlags
		warn  bool
	}{
		{name: "apply with a patch", files: FileFlags{PatchFiles: []string{patch}, WarnUnstoredPatches: true}, warn: true},
		{name: "apply without a patch", files: FileFlags{WarnUnstoredPatches: true}},
		{name: "render with a patch", files: FileFlags{PatchFiles: []string{patch}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, _, errOut := genericiooptions.NewTestIOStreams()
			g := &GlobalOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
			tc.files.Filename = example("minimal.yaml")
			if _, err := g.loadPlatforms(tc.files); err != nil {
				t.Fatal(err)
			}
			got := errOut.String()
			if !tc.warn {
				if got != "" {
					t.Fatalf("unexpected stderr: %q", got)
				}
				return
			}
			for _, want := range []string{"Warning:", patch, "not stored", "spec.patches"} {
				if !strings.Contains(got, want) {
					t.Errorf("warning %q lacks %q", got, want)
				}
			}
		})
	}
}
