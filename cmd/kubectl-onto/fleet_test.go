/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tenantDoc is a small platform named and namespaced name, with extra spec lines.
func tenantDoc(name, extraSpec string) string {
	return fmt.Sprintf("apiVersion: onto.paas/v1alpha1\nkind: OntoPlatform\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  version: \"1.6.0\"\n%s", name, name, extraSpec)
}

// badReplicas makes a platform invalid at spec.controlPlane.ontologyService.replicas.
const badReplicas = "  controlPlane:\n    ontologyService:\n      replicas: -1\n"

func writeTestFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestManyPlatformsInvalidInput: plan and apply of several platforms check every
// platform before any request; an invalid one stops the command, named by file, line
// and field, and nothing is sent (the server is unreachable: a request would fail
// otherwise, with another error).
func TestManyPlatformsInvalidInput(t *testing.T) {
	dir := t.TempDir()
	multi := writeTestFile(t, filepath.Join(dir, "tenants.yaml"),
		tenantDoc("tenant-a", "")+"---\n"+tenantDoc("tenant-b", "")+"---\n"+tenantDoc("tenant-c", badReplicas))
	tree := filepath.Join(dir, "tree")
	writeTestFile(t, filepath.Join(tree, "a.yaml"), tenantDoc("tenant-a", ""))
	writeTestFile(t, filepath.Join(tree, "nested", "b.yaml"), tenantDoc("tenant-b", badReplicas))
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"apply, the third document", []string{"apply", "-f", multi},
			[]string{"tenants.yaml:", "spec.controlPlane.ontologyService.replicas: Invalid value: -1"}},
		{"plan, the third document", []string{"plan", "-f", multi},
			[]string{"tenants.yaml:", "spec.controlPlane.ontologyService.replicas: Invalid value: -1"}},
		{"apply -R, a file in a subdirectory", []string{"apply", "-R", "-f", tree},
			[]string{filepath.Join("nested", "b.yaml") + ":", "spec.controlPlane.ontologyService.replicas"}},
		{"two platforms in one namespace", []string{"plan", "-f", writeTestFile(t, filepath.Join(dir, "same-ns.yaml"),
			tenantDoc("tenant-a", "")+"---\n"+strings.Replace(tenantDoc("tenant-b", ""), "namespace: tenant-b", "namespace: tenant-a", 1))},
			[]string{"one namespace holds one platform"}},
		{"--parallel 0", []string{"apply", "-f", multi, "--parallel", "0"}, []string{"invalid --parallel 0: it must be at least 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, append(tc.args, unreachable)...)
			if r.code != exitFailure {
				t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "connection refused") || r.stdout != "" {
				t.Errorf("the command went on to the cluster:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
		})
	}
	// Without -R, the subdirectory's invalid file is not read.
	r := runCmd(t, "plan", "-f", tree, unreachable)
	if strings.Contains(r.stderr, "b.yaml") || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("plan -f DIR without -R read a subdirectory, or did not go on to the cluster:\n%s", r.stderr)
	}
}

// TestManyPlatformsRefusedFlags: the flags that act on one platform's plan say so.
func TestManyPlatformsRefusedFlags(t *testing.T) {
	multi := writeTestFile(t, filepath.Join(t.TempDir(), "tenants.yaml"), tenantDoc("tenant-a", "")+"---\n"+tenantDoc("tenant-b", ""))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--plan", "plan.json"}, "--plan applies the saved plan of one platform; " + multi + " holds 2"},
		{[]string{"--dry-run"}, "--dry-run=client takes one platform; " + multi + " holds 2: kubectl onto render -f"},
		{[]string{"--dry-run=server"}, "--dry-run=server takes one platform; " + multi + " holds 2: kubectl onto plan -f"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCmd(t, append([]string{"apply", "-f", multi, unreachable}, tc.args...)...)
			if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
	// Several platforms share the clients and the CRD step: an unreachable cluster is
	// one error, before any platform runs, not one per platform.
	r := runCmd(t, "apply", "-f", multi, unreachable)
	if r.code != exitFailure || strings.Count(r.stderr, "connection refused") != 1 || strings.Contains(r.stderr, "tenant-a/tenant-a") || r.stdout != "" {
		t.Errorf("apply of two platforms against no cluster: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
