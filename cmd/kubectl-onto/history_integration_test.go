/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// TestScaleAndHistoryCommands drives scale and history through the root command on
// the real cluster: a scale prints its outcome and warns that the file differs, the
// same scale again writes nothing, and history lists both revisions in every format.
func TestScaleAndHistoryCommands(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	do := func(args ...string) result {
		t.Helper()
		r := runCmd(t, append(args, kc, "-n", ns)...)
		if r.code != 0 {
			t.Fatalf("kubectl onto %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	do("apply", "-f", platformFile(t, ns, smallSpec), "--plane-timeout=90s")

	r := do("scale", "gateway", "--replicas", "2", "--plane-timeout=90s")
	if want := "OntoPlatform " + ns + "/onto-dev: gateway scaled (replicas 1 → 2), Running"; !strings.HasPrefix(r.stdout, want) {
		t.Errorf("scale stdout %q; want it to start with %q", r.stdout, want)
	}
	if !strings.Contains(r.stderr, "warning: the platform file now differs from the cluster: update replicas of gateway in it (spec.gateway.replicas: 2), or the next apply -f reverts it") {
		t.Errorf("scale stderr lacks the warning:\n%s", r.stderr)
	}
	r = do("scale", "onto-dev", "gateway", "--replicas", "2")
	if want := "OntoPlatform " + ns + "/onto-dev: gateway already has 2 replicas: nothing written\n"; r.stdout != want {
		t.Errorf("second scale stdout %q, want %q", r.stdout, want)
	}

	r = do("history")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "REVISION  VERSION  ACTION  RESULT") ||
		!strings.Contains(lines[1], "apply") || !strings.Contains(lines[2], "scale") || !strings.Contains(lines[2], "onto-dev-rev-2  sha256:") {
		t.Errorf("history:\n%s", r.stdout)
	}
	var report upgrade.HistoryReport
	if err := json.Unmarshal([]byte(do("history", "onto-dev", "-o", "json").stdout), &report); err != nil {
		t.Fatal(err)
	}
	if len(report.Revisions) != 2 || report.Revisions[1].Action != "scale" || report.Revisions[1].Snapshot != "onto-dev-rev-2" {
		t.Errorf("history -o json: %+v", report)
	}
	if r := do("history", "-o", "yaml"); !strings.Contains(r.stdout, "action: scale") {
		t.Errorf("history -o yaml:\n%s", r.stdout)
	}
}
