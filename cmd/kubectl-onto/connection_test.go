/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// kubeconfigFor writes a kubeconfig whose current context, "kind-dev", points at
// server with a token and no certificate authority.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster:
    server: ` + server + `
contexts:
- name: kind-dev
  context:
    cluster: dev
    user: dev
    namespace: onto-system
current-context: kind-dev
users:
- name: dev
  user:
    token: not-a-real-token
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runMain is runCmd through execute, as main runs the root command: errors of talking
// to the API server are worded with the command's server and context.
func runMain(t *testing.T, args ...string) result {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	env := map[string]string{"NO_COLOR": "1", "HOME": t.TempDir()}
	root := NewCmdRoot(streams, func(k string) string { return env[k] })
	root.SetArgs(args)
	code := exitCode(execute(t.Context(), root), false, errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// klogLine is the header of a klog line ("E1130 12:00:00.000000 ..."), which a user
// must never see without -v.
var klogLine = regexp.MustCompile(`(?m)^[IWEF]\d{4} `)

// TestUnreachableCluster: when the API server cannot be reached, every command says so
// in one line naming the server, the kubeconfig context and what to check.
func TestUnreachableCluster(t *testing.T) {
	tlsServer := httptest.NewUnstartedServer(http.NotFoundHandler()) // its CA is in no kubeconfig
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0)           // the refused handshake
	tlsServer.StartTLS()
	defer tlsServer.Close()
	plainServer := httptest.NewServer(http.NotFoundHandler()) // no TLS at all
	defer plainServer.Close()
	plainAsHTTPS := strings.Replace(plainServer.URL, "http://", "https://", 1)
	tests := []struct {
		name, server string
		args         []string
		cause        string
	}{
		{name: "status, refused", server: "https://127.0.0.1:1", args: []string{"status"}, cause: "connection refused"},
		{name: "plan, refused", server: "https://127.0.0.1:1", args: []string{"plan", "-f", example("platform.yaml")}, cause: "connection refused"},
		{name: "unlock, refused", server: "https://127.0.0.1:1", args: []string{"unlock", "onto-production", "--yes"}, cause: "connection refused"},
		{name: "unknown certificate authority", server: tlsServer.URL, args: []string{"status"},
			cause: "TLS handshake failed: x509: certificate signed by unknown authority"},
		{name: "not TLS", server: plainAsHTTPS, args: []string{"status"}, cause: "TLS handshake failed: the server answered in plain HTTP, not TLS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Concat(tc.args, []string{"--kubeconfig", kubeconfigFor(t, tc.server)})
			r := runMain(t, args...)
			if r.code != exitFailure {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", r.code, exitFailure, r.stderr)
			}
			want := "error: cannot reach the Kubernetes API server at " + tc.server + ` (context "kind-dev"): ` + tc.cause
			if !strings.HasPrefix(r.stderr, want) {
				t.Errorf("stderr:\n%s\nwant it to start with:\n%s", r.stderr, want)
			}
			if !strings.HasSuffix(r.stderr, "; check --kubeconfig and --context, or that the cluster is running\n") {
				t.Errorf("stderr lacks the hint:\n%s", r.stderr)
			}
			if n := strings.Count(r.stderr, "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1:\n%s", n, r.stderr)
			}
			if klogLine.MatchString(r.stderr) {
				t.Errorf("klog noise on stderr:\n%s", r.stderr)
			}
		})
	}
}
