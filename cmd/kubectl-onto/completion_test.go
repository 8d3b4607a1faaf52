/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// completion is what `kubectl-onto __complete WORDS...` answered: the choices without
// their descriptions, and cobra's directive (the last line, ":N").
type completion struct {
	values    []string
	directive cobra.ShellCompDirective
	stderr    string
}

// complete asks the real root command for the completions of words, the last of which
// is the word being typed ("" for a new one), as the shell scripts and kubectl do.
func complete(t *testing.T, words ...string) completion {
	t.Helper()
	r := runCmd(t, append([]string{cobra.ShellCompRequestCmd}, words...)...)
	if r.code != 0 {
		t.Fatalf("__complete %q: exit %d\nstderr:\n%s", words, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("__complete %q: no directive as the last line:\n%s", words, r.stdout)
	}
	c := completion{directive: cobra.ShellCompDirective(d), stderr: r.stderr}
	for _, l := range lines[:len(lines)-1] {
		c.values = append(c.values, strings.SplitN(l, "\t", 2)[0])
	}
	return c
}

// outputFormats are the -o values of a command, as completion offers them: the formats
// its OutputFlags registered, jsonpath as "jsonpath=". Commands gain formats; the test
// checks completion offers what the command takes, whatever that is.
func outputFormats(t *testing.T, command string) []string {
	t.Helper()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams, func(string) string { return "" })
	cmd, _, err := root.Find([]string{command})
	if err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags().Lookup("output")
	if f == nil || len(f.Annotations[outputFormatsAnnotation]) == 0 {
		t.Fatalf("%s has no -o with its formats", command)
	}
	var out []string
	for _, v := range f.Annotations[outputFormatsAnnotation] {
		if v == string(printers.FormatJSONPath) {
			v += "="
		}
		out = append(out, v)
	}
	return out
}

// writeKubeconfig writes a kubeconfig whose contexts all point at server.
func writeKubeconfig(t *testing.T, server string, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server + "\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n")
	for _, c := range contexts {
		b.WriteString("- name: " + c + "\n  context: {cluster: c, user: u, namespace: onto}\n")
	}
	b.WriteString("current-context: " + contexts[0] + "\n")
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCompletion asks for the completions of a few command lines, as a shell would on
// TAB, and checks the choices and the directive.
func TestCompletion(t *testing.T) {
	catalog, err := release.Load(manifests.FS, manifests.ReleasesDir, "")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing listens on port 1: a cluster that refuses at once.
	unreachable := "--kubeconfig=" + writeKubeconfig(t, "https://127.0.0.1:1", "one", "two")
	noFiles := cobra.ShellCompDirectiveNoFileComp
	tests := []struct {
		name  string
		words []string
		// want are the exact choices, in order; has some of them.
		want, has []string
		directive cobra.ShellCompDirective
	}{
		{name: "commands", words: []string{""}, directive: noFiles,
			has: []string{"apply", "completion", "init", "plan", "render", "status", "uninstall", "unlock", "validate", "version"}},
		{name: "command prefix", words: []string{"pl"}, want: []string{"plan"}, directive: noFiles},
		{name: "planes", words: []string{"render", "--plane", ""}, directive: noFiles,
			want: []string{"tenancy", "infrastructure", "control", "data", "intelligence", "gateway", "observability"}},
		{name: "plane prefix", words: []string{"render", "--plane", "in"}, want: []string{"infrastructure", "intelligence"}, directive: noFiles},
		{name: "plane after =", words: []string{"render", "--plane=ga"}, want: []string{"gateway"}, directive: noFiles},
		{name: "profiles", words: []string{"init", "--profile", ""}, want: []string{"minimal", "production"}, directive: noFiles},
		{name: "plan formats", words: []string{"plan", "-o", ""}, want: outputFormats(t, "plan"), has: []string{"text", "json"}, directive: noFiles},
		{name: "render formats", words: []string{"render", "--output", ""}, want: outputFormats(t, "render"), has: []string{"yaml", "json"}, directive: noFiles},
		{name: "jsonpath", words: []string{"plan", "-o", "jsonp"}, want: []string{"jsonpath="}, directive: noFiles | cobra.ShellCompDirectiveNoSpace},
		{name: "dry-run values from usage", words: []string{"apply", "--dry-run="}, want: []string{"none", "client", "server"}, directive: noFiles},
		{name: "platform versions", words: []string{"init", "--platform-version", ""}, want: catalog.Versions(), directive: noFiles},
		{name: "platform file", words: []string{"apply", "-f", ""}, want: []string{"yaml", "yml", "json"}, directive: cobra.ShellCompDirectiveFilterFileExt},
		{name: "saved plan", words: []string{"apply", "--plan", ""}, want: []string{"json"}, directive: cobra.ShellCompDirectiveFilterFileExt},
		{name: "releases dir", words: []string{"render", "--releases", ""}, directive: cobra.ShellCompDirectiveFilterDirs},
		{name: "no arguments", words: []string{"plan", ""}, directive: noFiles},
		{name: "FILE argument", words: []string{"init", ""}, want: []string{"yaml", "yml", "json"}, directive: cobra.ShellCompDirectiveFilterFileExt},
		{name: "duration", words: []string{"status", "--timeout", ""}, directive: noFiles},
		{name: "contexts", words: []string{unreachable, "status", "--context", ""}, want: []string{"one", "two"}, directive: noFiles},
		{name: "names, no kubeconfig", words: []string{"--kubeconfig=/nonexistent", "status", ""}, directive: noFiles},
		{name: "names, unreachable", words: []string{unreachable, "unlock", ""}, directive: noFiles},
		{name: "namespaces, unreachable", words: []string{unreachable, "status", "-n", ""}, directive: noFiles},
		{name: "one name only", words: []string{unreachable, "status", "onto", ""}, directive: noFiles},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c := complete(t, tc.words...)
			if took := time.Since(start); took > completionTimeout {
				t.Errorf("completion took %s, more than its %s bound", took, completionTimeout)
			}
			if c.directive != tc.directive {
				t.Errorf("directive %d, want %d", c.directive, tc.directive)
			}
			for _, v := range tc.has {
				if !slices.Contains(c.values, v) {
					t.Errorf("choices %q do not include %q", c.values, v)
				}
			}
			if tc.want != nil || tc.has == nil {
				if diff := cmp.Diff(tc.want, c.values); diff != "" {
					t.Errorf("choices (-want +got):\n%s", diff)
				}
			}
			// A failed cluster lookup is silent: the shell shows stderr as is.
			if strings.Contains(strings.ToLower(c.stderr), "error") {
				t.Errorf("stderr has an error: %q", c.stderr)
			}
		})
	}
}

// TestCompletionScripts: cobra's completion command stays available for users who run
// kubectl-onto directly.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		t.Run(shell, func(t *testing.T) {
			r := runCmd(t, "completion", shell)
			if r.code != 0 || !strings.Contains(r.stdout, "__complete") {
				t.Fatalf("completion %s: exit %d, %d bytes, stderr %q", shell, r.code, len(r.stdout), r.stderr)
			}
		})
	}
}

// TestFirstArg: the placeholder in a command's Use decides how its argument completes.
func TestFirstArg(t *testing.T) {
	tests := []struct {
		use, want string
	}{
		{"status [NAME]", "NAME"},
		{"unlock NAME", "NAME"},
		{"rollback NAME [REVISION]", "NAME"},
		{"init [FILE]", "FILE"},
		{"apply -f FILE", ""},
		{"diff -f FILE [NAME]", "NAME"},
		{"version", ""},
		{"NAME", ""},
	}
	for _, tc := range tests {
		if got := firstArg(&cobra.Command{Use: tc.use}); got != tc.want {
			t.Errorf("firstArg(%q) = %q, want %q", tc.use, got, tc.want)
		}
	}
}
