/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
)

// contextKubeconfig writes a kubeconfig whose current context's namespace is ns, and
// returns its path. Nothing connects to its server.
func contextKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: "t"}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: ` + ns + `}
current-context: ctx
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNamespaceFlag: -n, or the kubeconfig context's namespace, or "default", places
// a platform whose file names no namespace; a file naming another namespace than -n
// is refused before anything is printed, as kubectl refuses it.
func TestNamespaceFlag(t *testing.T) {
	// No kubeconfig from the machine running the tests, and no in-cluster config, so
	// "default" is what kubectl would fall back to.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")

	noNamespace := filepath.Join("testdata", "no-namespace.yaml")
	minimal := example("minimal.yaml") // names namespace onto-dev
	tests := []struct {
		name     string
		args     []string
		wantCode int
		// golden compares stdout with testdata/TestNamespaceFlag/<name>.golden.
		golden bool
		// stdoutHas and stderrHas are fragments the outputs must hold.
		stdoutHas, stderrHas []string
		// namespace, when set, is the namespace every namespaced object of a
		// `render -o json` must be in.
		namespace string
	}{
		{name: "render-no-namespace-with-n", args: []string{"render", "-f", noNamespace, "-n", "team-x", "--plane", "tenancy"}, golden: true},
		{name: "render-no-namespace-with-n-all-planes", args: []string{"render", "-f", noNamespace, "-n", "team-x", "-o", "json"}, namespace: "team-x"},
		{name: "render-no-namespace-context", args: []string{"render", "-f", noNamespace, "--kubeconfig", contextKubeconfig(t, "ctx-ns"), "-o", "json"}, namespace: "ctx-ns"},
		{name: "render-no-namespace-no-kubeconfig", args: []string{"render", "-f", noNamespace, "-o", "json"}, namespace: "default"},
		{name: "render-same-namespace", args: []string{"render", "-f", minimal, "-n", "onto-dev", "-o", "json"}, namespace: "onto-dev"},
		{name: "render-file-namespace-over-context", args: []string{"render", "-f", minimal, "--kubeconfig", contextKubeconfig(t, "ctx-ns"), "-o", "json"}, namespace: "onto-dev"},
		{name: "render-namespace-mismatch", args: []string{"render", "-f", minimal, "-n", "other"}, wantCode: 1,
			stderrHas: []string{"../../examples/minimal.yaml: OntoPlatform onto-dev:", `namespace from the file "onto-dev" does not match the namespace "other"`, "--namespace=onto-dev"}},
		{name: "render-invalid-namespace-flag", args: []string{"render", "-f", noNamespace, "-n", "Team_X"}, wantCode: 1, stderrHas: []string{`namespace "Team_X"`}},
		{name: "validate-no-namespace", args: []string{"validate", "-f", noNamespace}, golden: true},
		{name: "validate-no-namespace-with-n", args: []string{"validate", "-f", noNamespace, "-n", "team-x"}, stdoutHas: []string{"OntoPlatform team-x/onto-dev"}},
		{name: "validate-same-namespace", args: []string{"validate", "-f", minimal, "-n", "onto-dev"}, stdoutHas: []string{"OntoPlatform onto-dev/onto-dev"}},
		// The file names its namespace, so the broken kubeconfig is never read.
		{name: "validate-missing-kubeconfig-unused", args: []string{"validate", "-f", minimal, "--kubeconfig", "/nonexistent"}, stdoutHas: []string{"OntoPlatform onto-dev/onto-dev"}},
		{name: "validate-namespace-mismatch", args: []string{"validate", "-f", minimal, "-n", "other"}, wantCode: 1,
			stderrHas: []string{`"onto-dev" does not match the namespace "other"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.args...)
			if r.code != tc.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.wantCode, r.stdout, r.stderr)
			}
			if tc.wantCode != 0 && r.stdout != "" {
				t.Errorf("a refused command printed on stdout:\n%s", r.stdout)
			}
			for _, frag := range tc.stderrHas {
				if !strings.Contains(r.stderr, frag) {
					t.Errorf("stderr %q does not hold %q", r.stderr, frag)
				}
			}
			for _, frag := range tc.stdoutHas {
				if !strings.Contains(r.stdout, frag) {
					t.Errorf("stdout %q does not hold %q", r.stdout, frag)
				}
			}
			if tc.golden {
				golden.Assert(t, []byte(r.stdout), filepath.Join("testdata", "TestNamespaceFlag", tc.name+".golden"))
			}
			if tc.namespace != "" {
				assertRenderedNamespace(t, r.stdout, tc.namespace)
			}
		})
	}
}

// assertRenderedNamespace checks that every object of a `render -o json` list is in
// namespace ns, or is the Namespace ns itself, or is cluster-scoped.
func assertRenderedNamespace(t *testing.T, out, ns string) {
	t.Helper()
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("render output is not a JSON list: %v", err)
	}
	if len(list.Items) == 0 {
		t.Fatal("render printed no objects")
	}
	sawNamespace := false
	for _, o := range list.Items {
		switch {
		case o.Kind == "Namespace":
			sawNamespace = true
			if o.Metadata.Name != ns {
				t.Errorf("Namespace %s rendered, want %s", o.Metadata.Name, ns)
			}
		case o.Metadata.Namespace != "" && o.Metadata.Namespace != ns:
			t.Errorf("%s %s rendered in namespace %s, want %s", o.Kind, o.Metadata.Name, o.Metadata.Namespace, ns)
		}
	}
	if !sawNamespace {
		t.Errorf("no Namespace object rendered for %s", ns)
	}
}
