/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// load reads a platform file through pkg/spec, exactly as the CLI does, and the release
// of its version from the shipped catalog.
func load(t testing.TB, path string) (*v1alpha1.OntoPlatform, release.Release) {
	t.Helper()
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := v.LoadFile(path, nil)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if len(ps) != 1 {
		t.Fatalf("load %s: %d platforms, want 1", path, len(ps))
	}
	rel, err := catalog.Get(ps[0].Spec.Version)
	if err != nil {
		t.Fatal(err)
	}
	return ps[0], rel
}

// toYAML prints planes as a multi-document stream, each plane introduced by a comment.
func toYAML(t testing.TB, planes []Plane) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, pl := range planes {
		for _, u := range pl.Objects {
			data, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			buf.WriteString("---\n# plane: " + string(pl.Name) + "\n")
			buf.Write(data)
		}
	}
	return buf.Bytes()
}

func TestRender(t *testing.T) {
	for _, name := range append(exampleNames(), "tls-issuer") {
		t.Run(name, func(t *testing.T) {
			p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
			planes, err := Render(p, Options{Release: rel})
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, toYAML(t, planes), filepath.Join("testdata", "TestRender", name+".golden"))
		})
	}
}
