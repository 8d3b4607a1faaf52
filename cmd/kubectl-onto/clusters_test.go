/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
)

// TestFleetOffline: what --fleet refuses before any request, against a kubeconfig
// whose servers nothing listens on (a request would fail with "cannot reach"
// instead): flags that pick one cluster, a bad fleet file, a bad platform file, a
// per-cluster patch that matches nothing. stderr is compared with golden files under
// testdata/TestFleetOffline.
func TestFleetOffline(t *testing.T) {
	dir := filepath.Join("testdata", "TestFleetOffline")
	kc := "--kubeconfig=" + filepath.Join(dir, "kubeconfig.yaml")
	fleet := func(name string) string { return filepath.Join(dir, name+".yaml") }
	tests := []struct {
		name      string
		args      []string
		stderrHas string
	}{
		{name: "unknown-context", args: []string{"apply", "--fleet", fleet("unknown-context"), kc},
			stderrHas: "unknown-context.yaml:9: waves[1].clusters[0].context: Not found: \"prod-us\""},
		{name: "patch-matches-nothing", args: []string{"plan", "--fleet", fleet("patch-matches-nothing"), kc},
			stderrHas: "cluster dev (waves[0].clusters[0].patches"},
		{name: "bad-platform", args: []string{"apply", "--fleet", fleet("bad-platform"), kc}, stderrHas: "bad-platform.yaml:"},
		{name: "with-context", args: []string{"apply", "--fleet", fleet("valid"), "--context", "dev", kc},
			stderrHas: "--context cannot go with --fleet"},
		{name: "with-filename", args: []string{"plan", "--fleet", fleet("valid"), "-f", "platform.yaml", kc},
			stderrHas: "--fleet and -f both name the platform"},
		{name: "with-patch", args: []string{"apply", "--fleet", fleet("valid"), "--patch", filepath.Join("testdata", "patch-gateway.yaml"), kc},
			stderrHas: "--patch cannot go with --fleet"},
		{name: "upgrade-without-to", args: []string{"upgrade", "--fleet", fleet("valid"), kc},
			stderrHas: "--fleet needs --to VERSION"},
		{name: "upgrade-unknown-version", args: []string{"upgrade", "--fleet", fleet("valid"), "--to", "9.9.9", kc},
			stderrHas: "9.9.9"},
		{name: "status-with-name", args: []string{"status", "onto-dev", "--fleet", fleet("valid"), kc},
			stderrHas: "it takes no NAME"},
		// examples/fleet.yaml: the contexts it names that the kubeconfig lacks.
		{name: "example", args: []string{"plan", "--fleet", filepath.Join("..", "..", "examples", "fleet.yaml"), kc},
			stderrHas: "fleet.yaml:20: waves[1].clusters[1].context: Not found: \"prod-us\""},
		{name: "apply-dry-run-client", args: []string{"apply", "--fleet", fleet("valid"), "--dry-run", kc},
			stderrHas: "--dry-run=client with --fleet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.args...)
			if r.code != 1 {
				t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "cannot reach") || r.stdout != "" {
				t.Fatalf("the command sent a request or printed a result:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.stderrHas) {
				t.Fatalf("stderr lacks %q:\n%s", tc.stderrHas, r.stderr)
			}
			golden.Assert(t, []byte(r.stderr), filepath.Join(dir, tc.name+".golden"))
		})
	}
}
