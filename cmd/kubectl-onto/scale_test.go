/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"strings"
	"testing"
)

// TestScaleFlags: scale refuses bad arguments and flag combinations before it talks
// to the cluster (the server here does not exist), saying what to give instead.
func TestScaleFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "nothing to change", args: []string{"gateway"}, want: "nothing to change: give --replicas N, or --min and/or --max"},
		{name: "both kinds", args: []string{"gateway", "--replicas", "2", "--max", "4"}, want: "--replicas and --min/--max exclude each other"},
		{name: "negative replicas", args: []string{"gateway", "--replicas=-1"}, want: "--replicas -1: must be 0 or more"},
		{name: "min of 0", args: []string{"data-service", "--min", "0"}, want: "--min 0: an autoscaler keeps at least 1 replica"},
		{name: "max of 0", args: []string{"data-service", "--max", "0"}, want: "--max 0: must be at least 1"},
		{name: "min above max", args: []string{"data-service", "--min", "5", "--max", "3"}, want: "--min 5 is above --max 3"},
		{name: "not a number", args: []string{"gateway", "--replicas", "two"}, want: `"two" is not a whole number`},
		{name: "no component", args: []string{"--replicas", "2"}, want: "accepts between 1 and 2 arg(s)"},
		{name: "too many arguments", args: []string{"p", "gateway", "extra", "--replicas", "2"}, want: "accepts between 1 and 2 arg(s)"},
		{name: "bad output", args: []string{"gateway", "--replicas", "2", "-o", "yaml"}, want: `unknown output format "yaml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, append(append([]string{"scale"}, tc.args...), unreachable)...)
			if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// TestScaleHelp: the help names every component and the apply flags scale shares,
// and only those.
func TestScaleHelp(t *testing.T) {
	r := runCmd(t, "scale", "--help")
	if r.code != 0 {
		t.Fatalf("scale --help: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"postgres, redis, minio, kafka", "agent-runtime, gateway\n", "--replicas int32", "--min int32", "--max int32",
		"--timeout duration", "--plane-timeout duration", "--lock-wait duration", "--force-conflicts", "kubectl onto scale gateway --replicas 3"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, not := range []string{"--prune", "--max-deletes", "--adopt", "--force-version", "--dry-run"} {
		if strings.Contains(r.stdout, not) {
			t.Errorf("help offers %s, which scale does not take", not)
		}
	}
}
