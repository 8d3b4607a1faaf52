/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

func TestExitCode(t *testing.T) {
	canceled := fmt.Errorf("plane gateway: wait: %w", context.Canceled)
	tests := []struct {
		name        string
		err         error
		interrupted bool
		wantCode    int
		wantOut     string
		notOut      string
	}{
		{name: "success", wantCode: exitOK},
		{name: "failure", err: errors.New("plane gateway: not ready"), wantCode: exitFailure, wantOut: "error: plane gateway: not ready"},
		{name: "Ctrl-C", err: canceled, interrupted: true, wantCode: exitInterrupted, wantOut: "interrupted: ", notOut: "context canceled"},
		{name: "a cancel without a signal is an error", err: canceled, wantCode: exitFailure, wantOut: "context canceled"},
		{name: "a failure that came before the signal", err: errors.New("forbidden"), interrupted: true, wantCode: exitFailure, wantOut: "error: forbidden"},
		{name: "exit code only", err: &ExitError{Code: exitChanges}, wantCode: exitChanges},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := exitCode(tc.err, tc.interrupted, &out); code != tc.wantCode {
				t.Fatalf("exit code %d, want %d", code, tc.wantCode)
			}
			if !strings.Contains(out.String(), tc.wantOut) || tc.notOut != "" && strings.Contains(out.String(), tc.notOut) {
				t.Fatalf("printed %q, want %q and not %q", out.String(), tc.wantOut, tc.notOut)
			}
		})
	}
}

// TestKlogOnlyWithVerbosity: client-go's klog lines reach stderr only with -v.
func TestKlogOnlyWithVerbosity(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{args: []string{"version"}},
		{args: []string{"version", "-v", "1"}, want: true},
	} {
		streams, _, _, errOut := genericiooptions.NewTestIOStreams()
		root := NewCmdRoot(streams, func(string) string { return "" })
		root.SetArgs(tc.args)
		if err := root.ExecuteContext(t.Context()); err != nil {
			t.Fatal(err)
		}
		klog.ErrorS(errors.New("context canceled"), "Unexpected error when reading response body")
		klog.Flush()
		if got := strings.Contains(errOut.String(), "Unexpected error when reading response body"); got != tc.want {
			t.Fatalf("%v: klog line on stderr = %v, want %v (stderr %q)", tc.args, got, tc.want, errOut.String())
		}
	}
}

// TestTimeoutFlagsAgree: across the command tree, --timeout bounds the whole run and
// --plane-timeout each plane, wherever a command has them.
func TestTimeoutFlagsAgree(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams, func(string) string { return "" })
	withPlane := 0
	for _, cmd := range root.Commands() {
		plane := cmd.Flags().Lookup("plane-timeout")
		if plane == nil {
			continue
		}
		withPlane++
		timeout := cmd.Flags().Lookup("timeout")
		if timeout == nil || !strings.Contains(timeout.Usage, "whole run") || !strings.Contains(plane.Usage, "each plane") {
			t.Errorf("%s: --timeout %q, --plane-timeout %q; want the whole run and each plane", cmd.Name(), timeout.Usage, plane.Usage)
		}
	}
	if withPlane < 2 {
		t.Fatalf("%d commands have --plane-timeout, want apply and uninstall", withPlane)
	}
}

// TestExplainAPIError: errors of talking to the API server are worded for the user,
// and only those.
func TestExplainAPIError(t *testing.T) {
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	rbac := apierrors.NewForbidden(leases, "onto-lock-onto-production",
		errors.New(`User "jane" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "onto-system"`))
	crds := apierrors.NewForbidden(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, "ontoplatforms.onto.paas",
		errors.New(`User "system:serviceaccount:ci:deployer" cannot patch resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "onto-admin" not found`))
	secrets := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "",
		errors.New(`User "jane" cannot list resource "secrets" in API group "" in the namespace "onto-system"`))
	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "gateway-0",
		errors.New("exceeded quota: onto-quota, requested: cpu=2, used: cpu=9, limited: cpu=10"))
	refused := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api?timeout=32s",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	noHost := &url.Error{Op: "Get", URL: "https://api.example.invalid:6443/api",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}}}
	webhook := apierrors.NewInternalError(errors.New(`failed calling webhook "v.example.com": Post "https://v.example.svc:443/validate": dial tcp 10.96.0.9:443: connect: connection refused`))
	tests := []struct {
		name    string
		err     error
		server  string
		context string
		want    string
	}{
		{name: "RBAC refusal in a namespace", err: fmt.Errorf("get lock lease onto-system/onto-lock-onto-production: %w", rbac),
			want: `forbidden: user "jane" cannot get resource "leases" (coordination.k8s.io) in namespace "onto-system" (needed to get lock lease onto-system/onto-lock-onto-production); see https://github.com/coomia-dip/kubectl-onto/blob/main/docs/permissions.md`},
		{name: "RBAC refusal at the cluster scope, with the authorizer's reason", err: crds,
			want: `forbidden: user "system:serviceaccount:ci:deployer" cannot patch resource "customresourcedefinitions" (apiextensions.k8s.io) at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "onto-admin" not found; see https://github.com/coomia-dip/kubectl-onto/blob/main/docs/permissions.md`},
		{name: "RBAC refusal in the core group", err: fmt.Errorf("list secrets: %w", secrets),
			want: `forbidden: user "jane" cannot list resource "secrets" in namespace "onto-system" (needed to list secrets); see https://github.com/coomia-dip/kubectl-onto/blob/main/docs/permissions.md`},
		{name: "another 403 is the server's message", err: fmt.Errorf("apply plane gateway: %w", quota),
			want: `apply plane gateway: pods "gateway-0" is forbidden: exceeded quota: onto-quota, requested: cpu=2, used: cpu=9, limited: cpu=10`},
		{name: "connection refused", err: fmt.Errorf("map OntoPlatform: %w", refused), server: "https://10.0.0.1:6443", context: "kind-dev",
			want: `cannot reach the Kubernetes API server at https://10.0.0.1:6443 (context "kind-dev"): connection refused; check --kubeconfig and --context, or that the cluster is running`},
		{name: "mid-run: the plane and object written, and the retry budget spent",
			err:    &apply.ApplyError{Plane: "control", Object: "Service onto/ontology-service", Err: &apply.BudgetSpentError{Budget: 30 * time.Second, Err: refused}},
			server: "https://10.0.0.1:6443", context: "kind-dev",
			want: `plane control: Service onto/ontology-service: cannot reach the Kubernetes API server at https://10.0.0.1:6443 (context "kind-dev"): connection refused, for the whole retry budget (30s); check --kubeconfig and --context, or that the cluster is running`},
		{name: "server from the request when the kubeconfig does not tell", err: refused,
			want: `cannot reach the Kubernetes API server at https://10.0.0.1:6443: connection refused; check --kubeconfig and --context, or that the cluster is running`},
		{name: "no such host", err: noHost, server: "https://api.example.invalid:6443", context: "prod",
			want: `cannot reach the Kubernetes API server at https://api.example.invalid:6443 (context "prod"): no such host "api.example.invalid"; check --kubeconfig and --context, or that the cluster is running`},
		{name: "flattened with %v", err: fmt.Errorf("discovery: %v", refused), server: "https://10.0.0.1:6443", context: "kind-dev",
			want: `cannot reach the Kubernetes API server at https://10.0.0.1:6443 (context "kind-dev"): connection refused; check --kubeconfig and --context, or that the cluster is running`},
		{name: "a deadline is not an unreachable server", err: fmt.Errorf("wait plane gateway: %w", context.DeadlineExceeded), server: "https://10.0.0.1:6443",
			want: "wait plane gateway: context deadline exceeded"},
		{name: "a webhook the API server cannot reach is the server's answer", err: fmt.Errorf("apply plane gateway: %w", webhook), server: "https://10.0.0.1:6443",
			want: `apply plane gateway: Internal error occurred: failed calling webhook "v.example.com": Post "https://v.example.svc:443/validate": dial tcp 10.96.0.9:443: connect: connection refused`},
		{name: "other errors unchanged", err: errors.New("plane gateway: not ready"), want: "plane gateway: not ready"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := explainAPIError(tc.err, tc.server, tc.context)
			if got.Error() != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Error("the worded error does not unwrap to the original")
			}
			var out bytes.Buffer
			exitCode(got, false, &out)
			if line := strings.TrimSuffix(out.String(), "\n"); line != "error: "+tc.want || strings.Contains(line, "ErrStatus") {
				t.Errorf("printed %q", out.String())
			}
		})
	}
}

// TestExplainAPIErrorKeepsExitCode: a worded error in an ExitError keeps its code, a
// silent one stays silent, and an interrupt is still one.
func TestExplainAPIErrorKeepsExitCode(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	var out bytes.Buffer
	if code := exitCode(explainAPIError(&ExitError{Code: exitChanges, Err: refused}, "https://10.0.0.1:6443", "dev"), false, &out); code != exitChanges ||
		!strings.HasPrefix(out.String(), "error: cannot reach the Kubernetes API server at https://10.0.0.1:6443") {
		t.Errorf("exit %d, printed %q", code, out.String())
	}
	out.Reset()
	if code := exitCode(explainAPIError(&ExitError{Code: exitFailure, Err: refused, Silent: true}, "", ""), false, &out); code != exitFailure || out.Len() != 0 {
		t.Errorf("silent: exit %d, printed %q", code, out.String())
	}
	canceled := fmt.Errorf("list: %w", errors.Join(context.Canceled, refused))
	if code := exitCode(explainAPIError(canceled, "", ""), true, &out); code != exitInterrupted {
		t.Errorf("interrupted: exit %d", code)
	}
}
