/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestCLIKeepsRemediations: a memory limit the watch raised (status.remediations)
// survives plan and apply of the unchanged file, each noting it on stderr with the
// spec field to copy it into; -o json stays JSON.
func TestCLIKeepsRemediations(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	const remediation = "  remediation:\n    memory: {enabled: true}\n"
	file := platformFile(t, ns, smallSpec+remediation)
	kc := "--kubeconfig=" + c.Kubeconfig
	if r := runCmd(t, "apply", "-f", file, "--plane-timeout=90s", kc); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	// As the watch records a raise after an OOM kill of the gateway (spec: 1Gi).
	gvr := schema.GroupVersionResource{Group: "onto.paas", Version: "v1alpha1", Resource: "ontoplatforms"}
	patch := `{"status":{"remediations":[{"component":"gateway","container":"gateway","resource":"memory","from":"1Gi","to":"1536Mi","specLimit":"1Gi","time":"2026-11-30T12:00:00Z","pod":"gateway-abc"}]}}`
	if _, err := c.Dynamic.Resource(gvr).Namespace(ns).Patch(t.Context(), "onto-dev", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	const note = "note: gateway's memory limit is 1536Mi, raised by the watch after an OOM kill (spec says 1Gi): copy it into spec.gateway.resources.limits.memory"
	limit := func() string {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		return q.String()
	}
	r := runCmd(t, "apply", "-f", file, "--plane-timeout=90s", kc)
	if r.code != 0 || !strings.Contains(r.stderr, note) {
		t.Fatalf("apply: exit %d, stderr without the note %q:\n%s", r.code, note, r.stderr)
	}
	if got := limit(); got != "1536Mi" {
		t.Fatalf("gateway's limit after apply of the unchanged file is %s, want the raised 1536Mi", got)
	}
	r = runCmd(t, "plan", "-f", file, "--detailed-exitcode", kc)
	if r.code != 0 || !strings.Contains(r.stderr, note) {
		t.Fatalf("plan of the unchanged file: exit %d (want 0: nothing to take back), stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	r = runCmd(t, "plan", "-f", file, "-o", "json", kc)
	if r.code != 0 || !json.Valid([]byte(r.stdout)) || strings.Contains(r.stdout, "note:") {
		t.Fatalf("plan -o json: exit %d, stdout not only JSON:\n%s", r.code, r.stdout)
	}
	// Once the file's limit is as high, the remediation is dropped and no note printed.
	raised := platformFile(t, ns, smallSpec+remediation+"  gateway:\n    resources:\n      requests: {cpu: 200m, memory: 256Mi}\n      limits: {cpu: \"2\", memory: 1536Mi}\n")
	r = runCmd(t, "plan", "-f", raised, "--detailed-exitcode", kc)
	// Only the OntoPlatform's spec changes: the gateway already runs with that limit.
	if r.code != 2 || strings.Contains(r.stderr, "note:") || strings.Contains(r.stdout, "update Deployment") {
		t.Fatalf("plan with the limit in the file: exit %d (want 2, the spec only), stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	// A lower limit in the file wins over the raise: the gateway goes back down.
	lower := platformFile(t, ns, smallSpec+remediation+"  gateway:\n    resources:\n      requests: {cpu: 200m, memory: 256Mi}\n      limits: {cpu: \"2\", memory: 768Mi}\n")
	if r := runCmd(t, "apply", "-f", lower, "--plane-timeout=90s", kc); r.code != 0 || !strings.Contains(r.stderr, "the file sets 768Mi where it said 1Gi") {
		t.Fatalf("apply with a lower limit in the file: exit %d, stderr without the note that the file wins:\n%s", r.code, r.stderr)
	}
	if got := limit(); got != "768Mi" {
		t.Fatalf("gateway's limit after the file lowered it: %s, want the file's 768Mi", got)
	}
	// So does remediation turned off, with the file's limit back at the one raised from.
	if r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), "--plane-timeout=90s", kc); r.code != 0 || !strings.Contains(r.stderr, "spec.remediation.memory.enabled is false") {
		t.Fatalf("apply with remediation off: exit %d, stderr without the note that remediation is off:\n%s", r.code, r.stderr)
	}
	if got := limit(); got != "1Gi" {
		t.Fatalf("gateway's limit with remediation off: %s, want the spec's 1Gi", got)
	}
}
