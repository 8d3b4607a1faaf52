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

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
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

// readmeShell returns a function that runs one README line as a user does after make
// demo: `source .cluster/env` (the file up.sh writes, here the test cluster's), then
// the line verbatim through bash, with kubectl finding the plugin just built on PATH
// as `kubectl onto`, in a work directory of the test's own. env is added to the
// line's environment. Every line must exit 0, so the README cannot rot.
func readmeShell(t *testing.T, env ...string) (run func(line string) string, prelude string) {
	t.Helper()
	plugin := builtPlugin(t)
	c := testcluster.New(t)
	envFile := filepath.Join(filepath.Dir(c.Kubeconfig), "env")
	if _, err := os.Stat(envFile); err != nil {
		mustrun.Skipf(t, "the cluster has no env file (%v): started by something other than hack/testcluster/up.sh", err)
	}
	bin := filepath.Dir(plugin()) // holds kubectl-onto only
	// The first block: the route from make demo to kubectl onto.
	setup := readmeBlock(t, "## Use")
	if len(setup) == 0 || setup[0] != "source .cluster/env" {
		t.Fatalf("the README's Use section starts with %q, want source .cluster/env", setup)
	}
	// bin/ of this checkout may hold an older build: the one just built goes first.
	prelude = "set -euo pipefail\nsource " + envFile + "\nexport PATH=" + bin + ":$PATH\n"
	work := t.TempDir()
	run = func(line string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "bash", "-c", prelude+line)
		cmd.Dir = work
		cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "HOME="+t.TempDir(), "KUBECONFIG="), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README line failed: %s\n%v\n%s", line, err, out)
		}
		t.Logf("$ %s\n%s", line, out)
		return string(out)
	}
	return run, prelude
}

// TestREADMEWalkthrough runs the README's "Use" section, its status line and then
// the walkthrough block, each line verbatim (see readmeShell).
func TestREADMEWalkthrough(t *testing.T) {
	run, prelude := readmeShell(t)
	t.Parallel() // its platform has a namespace of its own, onto
	// status -A works on any cluster; status -n onto-system needs the demo's platform.
	run(readmeBlock(t, "## Use")[1])
	t.Cleanup(func() {
		// A failed run leaves no platform behind for the next one.
		cmd := exec.Command("bash", "-c", prelude+"kubectl onto uninstall onto -n onto --delete-data >/dev/null 2>&1 || true")
		_ = cmd.Run()
	})
	for _, line := range readmeBlock(t, "<!-- walkthrough -->") {
		run(line)
	}
}

// TestREADMEDay2 runs the README's day-2 block verbatim on the demo's platform
// (examples/platform.yaml, onto-production in onto-system, on 1.5.0): upgrade to
// 1.6.0 with its dry run, history, rollback, scale. Two settings make it take a
// minute rather than eleven, neither in the README's lines: minReadySeconds 0 in the
// platform (the simulated pods are ready at once) and ONTO_CANARY_SOAK=1s in the
// environment, which every command reads as its --canary-soak default.
func TestREADMEDay2(t *testing.T) {
	run, prelude := readmeShell(t, "ONTO_CANARY_SOAK=1s")
	t.Parallel() // the demo's namespace, onto-system, is no other test's
	demo, err := os.ReadFile(filepath.Join("..", "..", "examples", "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(string(demo), "\n  global:\n", "\n  global:\n    minReadySeconds: 0\n", 1)
	if fast == string(demo) {
		t.Fatal("examples/platform.yaml has no spec.global to set minReadySeconds in")
	}
	file := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(file, []byte(fast), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd := exec.Command("bash", "-c", prelude+"kubectl onto uninstall onto-production -n onto-system --delete-data >/dev/null 2>&1 || true")
		_ = cmd.Run()
	})
	run("kubectl onto apply -f " + file + " -o json >/dev/null") // what make demo does
	block := readmeBlock(t, "<!-- day-2 -->")
	if len(block) < 4 {
		t.Fatalf("the day-2 block has %d lines: %q", len(block), block)
	}
	for _, line := range block {
		run(line)
	}
	// Where the block leaves the platform: back on 1.5.0 after the rollback, the
	// gateway scaled to 4.
	out := run("kubectl onto status onto-production -n onto-system -o jsonpath='{.version} {.phase}'")
	if got := strings.TrimSpace(out); got != "1.5.0 Running" {
		t.Errorf("after the day-2 block: %q, want 1.5.0 Running", got)
	}
	out = run("kubectl get deployment gateway -n onto-system -o jsonpath='{.spec.replicas}'")
	if got := strings.TrimSpace(out); got != "4" {
		t.Errorf("gateway replicas after the scale line: %q, want 4", got)
	}
}
