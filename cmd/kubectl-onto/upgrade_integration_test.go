/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// smallSpec keeps five components of the minimal example (postgres, ontology-service,
// data-service, nessie, gateway): every path of an upgrade, in less time; the CLI
// tests that need no other component install it too.
const smallSpec = ontotest.SmallSpecYAML

// TestCLIUpgradeResumesAfterKill: the built binary is killed with SIGKILL once the
// upgrade reached the data plane (control plane moved); the same command run again
// takes over the dead run's lock at once, resumes from where it stopped and finishes,
// with no canary left.
func TestCLIUpgradeResumesAfterKill(t *testing.T) {
	plugin := builtPlugin(t)
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	file := platformFile(t, ns, smallSpec)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), `version: "1.6.0"`, `version: "1.5.0"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 {
		t.Fatalf("apply 1.5.0: exit %d\n%s", r.code, r.stderr)
	}

	bin := plugin()
	args := []string{"upgrade", "-n", ns, "--to", "1.6.0", "--canary-soak", "1s", "-o", "json", kc}
	cmd := exec.CommandContext(t.Context(), bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev apply.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == apply.EventUpgradeStep && ev.Object == "data-service" {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatal("the upgrade ended before it reached data-service")
	}
	vs := func() map[string]string {
		deps, err := c.Kube.AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, d := range deps.Items {
			out[d.Name] = d.Spec.Template.Labels[v1alpha1.LabelVersion]
		}
		return out
	}
	if v := vs(); v["ontology-service"] != "1.6.0" || v["gateway"] != "1.5.0" {
		t.Fatalf("after the kill: ontology-service %s, gateway %s; want 1.6.0 and 1.5.0", v["ontology-service"], v["gateway"])
	}

	start := time.Now()
	r := runCmd(t, append(args[:len(args)-3], kc)...)
	if r.code != 0 || !strings.Contains(r.stderr, "resuming the upgrade 1.5.0 → 1.6.0") || !strings.Contains(r.stderr, "took over the lock") {
		t.Fatalf("the same upgrade after SIGKILL: exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.code, time.Since(start), r.stdout, r.stderr)
	}
	for name, v := range vs() {
		if v != "1.6.0" || strings.HasSuffix(name, "-canary") {
			t.Errorf("after the resumed upgrade: %s runs %s", name, v)
		}
	}
}
