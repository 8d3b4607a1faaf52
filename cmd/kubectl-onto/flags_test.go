/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// unreachable is a kubeconfig flag for commands that must fail or finish before any
// request: a server nothing listens on.
const unreachable = "--server=https://127.0.0.1:1"

// TestDryRunFlagsAgree: every command with --dry-run takes kubectl's values, a bare
// --dry-run is client, and a bad value reads the same everywhere.
func TestDryRunFlagsAgree(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams, func(string) string { return "" })
	var with []string
	for _, cmd := range root.Commands() {
		f := cmd.Flags().Lookup("dry-run")
		if f == nil {
			continue
		}
		with = append(with, cmd.Name())
		if f.NoOptDefVal != "client" || f.DefValue != "none" || !strings.Contains(f.Usage, "none|client|server") {
			t.Errorf("%s --dry-run: default %q, bare %q, usage %q; want none, client, none|client|server", cmd.Name(), f.DefValue, f.NoOptDefVal, f.Usage)
		}
	}
	if strings.Join(with, ",") != "apply,rollback,uninstall,upgrade" {
		t.Fatalf("commands with --dry-run: %v, want apply, rollback, uninstall and upgrade", with)
	}
	bad := map[string]string{}
	for _, args := range [][]string{
		{"apply", "-f", example("minimal.yaml"), "--dry-run=maybe"},
		{"uninstall", "x", "--dry-run=maybe"},
	} {
		r := runCmd(t, append(args, unreachable)...)
		if r.code != exitFailure {
			t.Fatalf("%v: exit %d, want 1\n%s", args, r.code, r.stderr)
		}
		bad[args[0]] = r.stderr
	}
	if bad["apply"] != bad["uninstall"] || !strings.Contains(bad["apply"], `invalid --dry-run "maybe": use none, client or server`) {
		t.Fatalf("bad --dry-run reads differently:\napply: %q\nuninstall: %q", bad["apply"], bad["uninstall"])
	}
}

// TestApplyClientDryRun: a bare --dry-run lists what apply would write, plane by plane,
// and sends nothing: the server here does not exist.
func TestApplyClientDryRun(t *testing.T) {
	r := runCmd(t, "apply", "--dry-run", "-f", example("minimal.yaml"), unreachable)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"▸ tenancy\n", "▸ control\n", "deployment.apps/gateway (dry run)\n", "ontoplatform.onto.paas/onto-dev (dry run)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "nothing was sent to the cluster") {
		t.Errorf("stderr %q does not say nothing was sent", r.stderr)
	}
}

// TestOutputFromEnvironment: a shared ONTO_OUTPUT a command cannot take is skipped
// there and used where it can; a per-command value that is invalid is an error.
func TestOutputFromEnvironment(t *testing.T) {
	run := func(env map[string]string, args ...string) result {
		t.Helper()
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		env["HOME"], env["NO_COLOR"] = t.TempDir(), "1"
		root := NewCmdRoot(streams, func(k string) string { return env[k] })
		root.SetArgs(args)
		code := exitCode(root.ExecuteContext(t.Context()), false, errOut)
		return result{stdout: out.String(), stderr: errOut.String(), code: code}
	}
	r := run(map[string]string{"ONTO_OUTPUT": "text"}, "render", "-f", example("minimal.yaml"), "--plane", "tenancy")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "---\n# plane: tenancy") {
		t.Fatalf("render with ONTO_OUTPUT=text: exit %d, stdout %.60q, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(map[string]string{"ONTO_OUTPUT": "json"}, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "{") {
		t.Fatalf("version with ONTO_OUTPUT=json: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(map[string]string{"ONTO_OUTPUT": "json", "ONTO_VERSION_OUTPUT": "yaml"}, "version")
	if r.code != 0 || strings.HasPrefix(r.stdout, "{") || !strings.Contains(r.stdout, ":") {
		t.Fatalf("ONTO_VERSION_OUTPUT=yaml must win over ONTO_OUTPUT: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(map[string]string{"ONTO_RENDER_OUTPUT": "text"}, "render", "-f", example("minimal.yaml"))
	if r.code != exitFailure || !strings.Contains(r.stderr, `ONTO_RENDER_OUTPUT: invalid value "text" for --output of render`) {
		t.Fatalf("an invalid per-command value must fail: exit %d, stderr %q", r.code, r.stderr)
	}

	// The config file: a section per command, and top-level keys for all.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("output: text\nversion:\n  output: json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(map[string]string{}, "version", "--config", cfg)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "{") {
		t.Fatalf("version: section in the config file: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(map[string]string{}, "render", "--config", cfg, "-f", example("minimal.yaml"), "--plane", "tenancy")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "---") {
		t.Fatalf("render with output: text in the config file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestOutputFormats: -o name and -o jsonpath, and errors for what a command lacks.
func TestOutputFormats(t *testing.T) {
	r := runCmd(t, "render", "-f", example("minimal.yaml"), "--plane", "tenancy", "-o", "name")
	if r.code != 0 || !strings.Contains(r.stdout, "namespace/onto-dev\n") {
		t.Fatalf("render -o name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "validate", "-f", example("minimal.yaml"), "-o", "jsonpath={.valid}")
	if r.code != 0 || r.stdout != "true" {
		t.Fatalf("validate -o jsonpath: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for args, want := range map[string]string{
		"render -o wide":         `unknown output format "wide": use one of yaml, json, name`,
		"validate -o jsonpath":   "-o jsonpath needs a template",
		"validate -o yaml=x":     "only jsonpath takes a value",
		"status -o jsonpath={.x": "-o jsonpath={.x: unclosed action",
	} {
		argv := append(strings.Fields(args), "-f", example("minimal.yaml"))
		if argv[0] == "status" {
			argv = strings.Fields(args)
		}
		r := runCmd(t, append(argv, unreachable)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", args, r.code, r.stderr, want)
		}
	}
}

// TestRunWithin: the timeout of a whole run ends it with an error that names the
// command, the flag's value and what to do; other errors pass unchanged.
func TestRunWithin(t *testing.T) {
	err := runWithin(t.Context(), time.Millisecond, "upgrade", "run the same command again to resume", func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if err == nil || err.Error() != "upgrade did not finish within --timeout=1ms (run the same command again to resume): context deadline exceeded" {
		t.Fatalf("timed out run: %v", err)
	}
	plain := errors.New("plane control: refused")
	if err := runWithin(t.Context(), 0, "apply", "x", func(context.Context) error { return plain }); err != plain {
		t.Fatalf("a failed run without a timeout: %v, want its own error", err)
	}
}

// TestApplyFlagFloors: a lock TTL too short to renew, or a negative retry budget, is
// refused before anything is read, by every command that applies.
func TestApplyFlagFloors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", example("minimal.yaml"), "--lock-ttl", "1s"}, "--lock-ttl 1s: must be at least 3s"},
		{[]string{"apply", "-f", example("minimal.yaml"), "--retry-budget", "-1s"}, "--retry-budget -1s: must not be negative"},
		{[]string{"upgrade", "--to", "1.6.0", "--lock-ttl", "2s"}, "--lock-ttl 2s: must be at least 3s"},
		{[]string{"scale", "gateway", "--replicas", "2", "--lock-ttl", "2s"}, "--lock-ttl 2s: must be at least 3s"},
	} {
		// A cluster nobody listens at: the refusal must come before any request.
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: onto-dev}}]
users: [{name: u, user: {token: t}}]
current-context: c
`), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCmd(t, append(tc.args, "--kubeconfig", kubeconfig)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
