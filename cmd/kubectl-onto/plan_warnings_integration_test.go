/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// quotaSpec is smallSpec with a tenancy quota of cpu requests.
func quotaSpec(cpu string) string {
	return smallSpec + fmt.Sprintf("  tenancy:\n    resourceQuota:\n      requests.cpu: %q\n", cpu)
}

// TestCLIQuotaShrinkWarning (issue 32): a ResourceQuota shrunk below what the namespace
// already uses gets a warning from plan and from apply, naming the quota, the
// resource, the new limit and the usage; a quota above the usage gets none.
func TestCLIQuotaShrinkWarning(t *testing.T) {
	c := testcluster.New(t)
	t.Parallel()
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	if r := runCmd(t, "apply", "-f", platformFile(t, ns, quotaSpec("100")), kc); r.code != 0 {
		t.Fatalf("apply: exit %d:\n%s", r.code, r.stderr)
	}
	// The quota controller counts the platform's pods into status.used.
	quota := &corev1.ResourceQuota{}
	quota.Namespace, quota.Name = ns, "onto-dev" // the platform's name
	quota, err := testcluster.WaitFor(t.Context(), c, quota, time.Minute, func(q *corev1.ResourceQuota) (bool, error) {
		used := q.Status.Used[corev1.ResourceRequestsCPU]
		return !used.IsZero(), nil
	})
	if err != nil {
		t.Fatalf("ResourceQuota %s/onto-dev never counted the pods' cpu requests: %v", ns, err)
	}
	used := quota.Status.Used[corev1.ResourceRequestsCPU]
	want := fmt.Sprintf("ResourceQuota %s/onto-dev: the new hard limit of requests.cpu, 1m, is below what namespace %s already uses, %s", ns, ns, used.String())

	// The quota as applied, far above the usage: no warning.
	if r := runCmd(t, "plan", "-f", platformFile(t, ns, quotaSpec("100")), kc); r.code != 0 || strings.Contains(r.stdout+r.stderr, "is below what namespace") {
		t.Fatalf("plan of a quota above the usage %s: exit %d, want 0 and no warning:\n%s\n%s", used.String(), r.code, r.stdout, r.stderr)
	}
	shrunk := platformFile(t, ns, quotaSpec("1m"))
	r := runCmd(t, "plan", "-f", shrunk, kc)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, want) {
		t.Fatalf("plan of a quota below the usage: exit %d; want 0 and a warning with %q:\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
	t.Logf("plan:\n%s%s", r.stdout, r.stderr)
	r = runCmd(t, "apply", "-f", shrunk, kc)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, want) {
		t.Fatalf("apply of a quota below the usage: exit %d; want 0 and a warning with %q:\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
	q, err := c.Kube.CoreV1().ResourceQuotas(ns).Get(t.Context(), "onto-dev", metav1.GetOptions{})
	if hard := q.Spec.Hard[corev1.ResourceRequestsCPU]; err != nil || hard.String() != "1m" {
		t.Fatalf("the shrunk quota was not applied: hard %v, %v", q.Spec.Hard, err)
	}
}
