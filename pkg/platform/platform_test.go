/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

func newLoader(t *testing.T) *Loader {
	t.Helper()
	cat, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(cat)
	if err != nil {
		t.Fatal(err)
	}
	return &Loader{Validator: v, Catalog: cat}
}

// withoutNamespace writes examples/minimal.yaml without its metadata.namespace.
func withoutNamespace(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "  namespace: onto-dev\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoaderDesired(t *testing.T) {
	minimal := filepath.Join("..", "..", "examples", "minimal.yaml")
	tests := []struct {
		name      string
		file      string
		namespace string
		context   string
		wantNS    string
		wantErr   string
	}{
		{name: "the file's namespace", file: minimal, wantNS: "onto-dev"},
		{name: "the same namespace given", file: minimal, namespace: "onto-dev", wantNS: "onto-dev"},
		{name: "another namespace given", file: minimal, namespace: "other", wantErr: `does not match the namespace "other"`},
		{name: "no namespace in the file, -n", file: withoutNamespace(t), namespace: "team-a", wantNS: "team-a"},
		{name: "no namespace in the file, the context's", file: withoutNamespace(t), context: "ctx-ns", wantNS: "ctx-ns"},
		{name: "no namespace anywhere", file: withoutNamespace(t), wantNS: "default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoader(t)
			l.Namespace = tc.namespace
			if tc.context != "" {
				l.ContextNamespace = func() (string, error) { return tc.context, nil }
			}
			lp, err := l.LoadOne(tc.file, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadOne = %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, err := lp.Desired()
			if err != nil {
				t.Fatal(err)
			}
			if d.Namespace != tc.wantNS || d.Platform.GetNamespace() != tc.wantNS {
				t.Fatalf("desired namespace %s (parent %s), want %s", d.Namespace, d.Platform.GetNamespace(), tc.wantNS)
			}
			for _, o := range d.Objects() {
				if o.GetKind() != "Namespace" && o.GetNamespace() != tc.wantNS {
					t.Fatalf("%s %s is in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), tc.wantNS)
				}
			}
		})
	}
	// The context is not asked when the file names its namespace (no kubeconfig needed).
	l := newLoader(t)
	l.ContextNamespace = func() (string, error) { return "", errors.New("no kubeconfig") }
	if _, err := l.LoadOne(minimal, nil); err != nil {
		t.Fatalf("LoadOne of a file naming its namespace asked the context: %v", err)
	}
}
