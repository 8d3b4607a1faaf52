/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
)

// TestGeneratedFilesAreCurrent fails when the CRD or the deepcopy functions were not
// regenerated after a change to the types: pkg/spec validates with the committed CRD,
// so a stale one would let offline validation and the API server disagree.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	mustrun.SkipIfShort(t, "runs controller-gen")
	goBin, err := exec.LookPath("go")
	if err != nil {
		mustrun.Skipf(t, "go is not on PATH, cannot run controller-gen: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// The same generators and options as `make generate`, written to a temp dir.
	cmd := exec.CommandContext(t.Context(), goBin, "tool", "controller-gen",
		"object:headerFile=hack/boilerplate.go.txt", "paths=./api/...", "output:object:dir="+out,
		"crd", "output:crd:dir="+out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, b)
	}
	for generated, committed := range map[string]string{
		"zz_generated.deepcopy.go":     "api/v1alpha1/zz_generated.deepcopy.go",
		"onto.paas_ontoplatforms.yaml": "manifests/crd/onto.paas_ontoplatforms.yaml",
	} {
		want, err := os.ReadFile(filepath.Join(out, generated))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, committed))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s is stale; run `make generate` (-generated +committed):\n%s", committed, cmp.Diff(string(want), string(got)))
		}
	}
}
