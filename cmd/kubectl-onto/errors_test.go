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
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
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
