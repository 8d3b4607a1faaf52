/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// readmeBlock returns the lines of the first ```sh block after marker in the README,
// without comments or blank lines, as a user would paste them.
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("README.md has no %q", marker)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("README.md has no sh block after %q", marker)
	}
	block, _, _ := strings.Cut(rest, "```")
	var lines []string
	for _, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// TestREADMEWalkthrough runs the README's "Use" section as a user does after make
// demo: `source .cluster/env` (the file up.sh writes, here the test cluster's), then
// each line of the walkthrough verbatim through bash, with kubectl finding the plugin
// on PATH as `kubectl onto`. Every line must exit 0, so the README cannot rot.
func TestREADMEWalkthrough(t *testing.T) {
	plugin := builtPlugin(t)
	t.Parallel() // its platform has a namespace of its own, onto
	c := testcluster.New(t)
	envFile := filepath.Join(filepath.Dir(c.Kubeconfig), "env")
	if _, err := os.Stat(envFile); err != nil {
		t.Skipf("the cluster has no env file (%v): started by something other than hack/testcluster/up.sh", err)
	}
	bin := filepath.Dir(plugin()) // holds kubectl-onto only
	// The first block: the route from make demo to kubectl onto.
	setup := readmeBlock(t, "## Use")
	if len(setup) == 0 || setup[0] != "source .cluster/env" {
		t.Fatalf("the README's Use section starts with %q, want source .cluster/env", setup)
	}
	// bin/ of this checkout may hold an older build: the one just built goes first.
	prelude := "set -euo pipefail\nsource " + envFile + "\nexport PATH=" + bin + ":$PATH\n"
	work := t.TempDir()
	run := func(line string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "bash", "-c", prelude+line)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "NO_COLOR=1", "HOME="+t.TempDir(), "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README line failed: %s\n%v\n%s", line, err, out)
		}
		t.Logf("$ %s\n%s", line, out)
	}
	// status -A works on any cluster; status -n onto-system needs the demo's platform.
	run(setup[1])
	t.Cleanup(func() {
		// A failed run leaves no platform behind for the next one.
		cmd := exec.Command("bash", "-c", prelude+"kubectl onto uninstall onto -n onto --delete-data >/dev/null 2>&1 || true")
		_ = cmd.Run()
	})
	for _, line := range readmeBlock(t, "<!-- walkthrough -->") {
		run(line)
	}
}
