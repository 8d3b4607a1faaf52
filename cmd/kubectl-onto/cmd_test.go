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
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// built is the plugin binary, built once for the tests that run it as a process, in
// a directory of its own removed when the last of them ends: testcluster.Main ends in
// os.Exit, so nothing of TestMain runs after the tests.
var built struct {
	mu    sync.Mutex
	users int    // tests registered by builtPlugin whose cleanup has not run yet
	dir   string // holds kubectl-onto; "" until built
}

// builtPlugin registers t as a user of the built binary and returns a function that
// builds it (the first call in the test binary) and returns its path. Call it before
// t.Parallel: a parallel test resumes only once every top-level test has started, so
// every user is registered before any of them ends and the directory goes when the
// last one does. (A sequential user ending before the others register makes them
// build again, which is correct, only slower.)
func builtPlugin(t *testing.T) func() string {
	t.Helper()
	built.mu.Lock()
	built.users++
	built.mu.Unlock()
	t.Cleanup(func() {
		built.mu.Lock()
		defer built.mu.Unlock()
		if built.users--; built.users == 0 && built.dir != "" {
			_ = os.RemoveAll(built.dir)
			built.dir = ""
		}
	})
	return func() string {
		t.Helper()
		built.mu.Lock()
		defer built.mu.Unlock()
		if built.dir == "" {
			dir, err := os.MkdirTemp("", "kubectl-onto-test-")
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", filepath.Join(dir, "kubectl-onto"), ".").CombinedOutput(); err != nil {
				_ = os.RemoveAll(dir)
				t.Fatalf("go build: %v\n%s", err, out)
			}
			built.dir = dir
		}
		return filepath.Join(built.dir, "kubectl-onto")
	}
}

// result is what one run of the root command printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// run executes the real root command, as main does, with a plain environment so the
// output has no colour codes, and returns what it printed and its exit code.
func runCmd(t *testing.T, args ...string) result {
	t.Helper()
	return runCmdIn(t, "", args...)
}

// runCmdIn is runCmd with stdin, for commands that ask.
func runCmdIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.WriteString(stdin)
	env := map[string]string{"NO_COLOR": "1", "HOME": t.TempDir()}
	root := NewCmdRoot(streams, func(k string) string { return env[k] })
	root.SetArgs(args)
	code := exitCode(root.ExecuteContext(t.Context()), false, errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

func example(name string) string { return filepath.Join("..", "..", "examples", name) }

// TestCommandOutput runs commands that need no cluster and compares what they print
// with golden files under testdata/TestCommandOutput.
func TestCommandOutput(t *testing.T) {
	bad := filepath.Join("testdata", "bad-platform.yaml")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		// stderrHas is a fragment the error output must contain.
		stderrHas string
	}{
		{name: "validate-production", args: []string{"validate", "-f", example("platform.yaml")}},
		{name: "validate-bad", args: []string{"validate", "-f", bad}, wantCode: 1},
		{name: "validate-bad-json", args: []string{"validate", "-f", bad, "-o", "json"}, wantCode: 1},
		// A directory: each file's result and issues name it; two platforms in one namespace are refused.
		{name: "validate-dir", args: []string{"validate", "-f", filepath.Join("testdata", "validate-dir")}, wantCode: 1},
		{name: "validate-dir-other-namespace", args: []string{"validate", "-f", filepath.Join("testdata", "validate-dir"), "-n", "other"}, wantCode: 1,
			stderrHas: `testdata/validate-dir/tenant-c.json: OntoPlatform tenant-c: the namespace from the file "tenant-a" does not match the namespace "other" given with -n`},
		{name: "validate-dir-recursive-json", args: []string{"validate", "-R", "-f", filepath.Join("testdata", "validate-dir"), "-o", "json"}, wantCode: 1},
		{name: "validate-warning", args: []string{"validate", "-f", filepath.Join("testdata", "ingress-unreachable.yaml")}},
		{name: "validate-warning-json", args: []string{"validate", "-f", filepath.Join("testdata", "ingress-unreachable.yaml"), "-o", "json"}},
		{name: "render-warning", args: []string{"render", "-f", filepath.Join("testdata", "ingress-unreachable.yaml"), "--plane", "tenancy"},
			stderrHas: "Warning: OntoPlatform onto-edge/onto-edge: spec.tenancy.networkPolicy.ingressNamespaces: spec.gateway.ingress is enabled but no namespace may reach the gateway"},
		{name: "render-minimal-tenancy", args: []string{"render", "-f", example("minimal.yaml"), "--plane", "tenancy"}},
		{name: "render-tenant-json-tenancy", args: []string{"render", "-f", example("tenant.yaml"), "--plane", "tenancy", "-o", "json"}},
		// What apply creates in the cluster is a comment; autoscaled Deployments carry no replicas.
		{name: "render-platform-tenancy", args: []string{"render", "-f", example("platform.yaml"), "--plane", "tenancy"}},
		{name: "render-platform-control", args: []string{"render", "-f", example("platform.yaml"), "--plane", "control"}},
		{name: "render-platform-json-infrastructure", args: []string{"render", "-f", example("platform.yaml"), "--plane", "infrastructure", "-o", "json"},
			stderrHas: "note: Secret onto-system/postgres left out: kubectl onto apply or the watch creates it in the cluster, with generated values of password, replication-password"},
		{name: "render-platform-name-infrastructure", args: []string{"render", "-f", example("platform.yaml"), "--plane", "infrastructure", "-o", "name"}},
		{name: "init-minimal", args: []string{"init", "--profile", "minimal", "-", "--platform-version", "1.6.0"}},
		{name: "init-production", args: []string{"init", "--profile", "production", "-", "--name", "prod", "-n", "onto-prod", "--platform-version", "1.5.0"}},
		{name: "render-bad-plane", args: []string{"render", "-f", example("minimal.yaml"), "--plane", "nope"}, wantCode: 1, stderrHas: "unknown plane \"nope\": use one of tenancy, infrastructure"},
		{name: "render-bad-output", args: []string{"render", "-f", example("minimal.yaml"), "-o", "xml"}, wantCode: 1, stderrHas: "unknown output format \"xml\""},
		{name: "validate-no-file", args: []string{"validate"}, wantCode: 1, stderrHas: "pass -f platform.yaml"},
		{name: "render-invalid-file", args: []string{"render", "-f", bad}, wantCode: 1, stderrHas: "bad-platform.yaml:"},
		{name: "init-unknown-profile", args: []string{"init", "--profile", "huge", "-"}, wantCode: 1, stderrHas: "unknown profile \"huge\""},
		{name: "render-with-patch", args: []string{"render", "-f", example("minimal.yaml"), "--plane", "gateway", "--patch", filepath.Join("testdata", "patch-gateway.yaml")}},
		{name: "render-patch-matches-nothing", args: []string{"render", "-f", example("minimal.yaml"), "--patch", filepath.Join("testdata", "patch-missing.yaml")}, wantCode: 1, stderrHas: "no-such-service"},
		{name: "plan-invalid-file-no-cluster", args: []string{"plan", "-f", bad, "--kubeconfig", "/nonexistent"}, wantCode: 1, stderrHas: "spec.version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.args...)
			if r.code != tc.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.wantCode, r.stdout, r.stderr)
			}
			if tc.stderrHas != "" {
				if !strings.Contains(r.stderr, tc.stderrHas) {
					t.Fatalf("stderr %q does not contain %q", r.stderr, tc.stderrHas)
				}
				return
			}
			golden.Assert(t, []byte(r.stdout), filepath.Join("testdata", "TestCommandOutput", tc.name+".golden"))
		})
	}
}

// TestInitWritesValidFile: init writes a file that validate accepts, and refuses to
// overwrite it without --force.
func TestInitWritesValidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "platform.yaml")
	if r := runCmd(t, "init", "--profile", "production", path); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	if r := runCmd(t, "validate", "-f", path); r.code != 0 {
		t.Fatalf("validate of init's file: %d %s", r.code, r.stdout)
	}
	before, _ := os.ReadFile(path)
	if r := runCmd(t, "init", path); r.code != 1 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("init over an existing file: %d %q, want a refusal naming --force", r.code, r.stderr)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("a refused init changed the file")
	}
	if r := runCmd(t, "init", path, "--force"); r.code != 0 {
		t.Fatalf("init --force: %d %s", r.code, r.stderr)
	}
}

// TestInitNamespace: without -n the platform gets a namespace of its own name (not
// the demo's onto-system); -n places it; the old -f and --platform-namespace still
// work, with a deprecation warning.
func TestInitNamespace(t *testing.T) {
	ns := func(r result) string {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("init: exit %d: %s", r.code, r.stderr)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if v, ok := strings.CutPrefix(line, "  namespace: "); ok {
				return v
			}
		}
		t.Fatalf("no namespace in\n%s", r.stdout)
		return ""
	}
	if got := ns(runCmd(t, "init", "-")); got != "onto" {
		t.Errorf("init: namespace %q, want onto (the platform's name)", got)
	}
	if got := ns(runCmd(t, "init", "--name", "acme", "-")); got != "acme" {
		t.Errorf("init --name acme: namespace %q, want acme", got)
	}
	if got := ns(runCmd(t, "init", "-n", "team-a", "-")); got != "team-a" {
		t.Errorf("init -n team-a: namespace %q", got)
	}
	r := runCmd(t, "init", "-f", "-", "--platform-namespace", "old-style")
	if got := ns(r); got != "old-style" || !strings.Contains(r.stderr, "deprecated") {
		t.Errorf("init -f - --platform-namespace: namespace %q, stderr %q; want old-style and a deprecation warning", got, r.stderr)
	}
	if r := runCmd(t, "init", "-n", "a", "--platform-namespace", "b", "-"); r.code != 1 || !strings.Contains(r.stderr, "disagree") {
		t.Errorf("-n and --platform-namespace disagreeing: exit %d %q", r.code, r.stderr)
	}
}

// TestEnvironmentSetsFlags: ONTO_<FLAG> gives a flag its value when the command line
// does not.
func TestEnvironmentSetsFlags(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	env := map[string]string{"NO_COLOR": "1", "ONTO_OUTPUT": "json"}
	root := NewCmdRoot(streams, func(k string) string { return env[k] })
	root.SetArgs([]string{"validate", "-f", example("minimal.yaml")})
	if code := exitCode(root.ExecuteContext(t.Context()), false, errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(strings.TrimSpace(out.String()), "{") {
		t.Fatalf("ONTO_OUTPUT=json did not select JSON output: %q", out.String())
	}
}
