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

// TestCLIQuotaShrinkWarning: a ResourceQuota shrunk below what the namespace
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

// TestCLIIngressTLSWarning: an Ingress whose TLS Secret does not exist, or
// lacks tls.key, gets a warning from plan and apply naming the Ingress, the Secret
// and the spec field; apply still installs; once the Secret is whole, none. No value
// of the Secret is printed.
func TestCLIIngressTLSWarning(t *testing.T) {
	c := testcluster.New(t)
	t.Parallel()
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	file := platformFile(t, ns, smallSpec+"  gateway:\n    ingress: {enabled: true, host: onto.example.com, tls: true}\n")
	const secret = "onto-dev-gateway-tls" // the default, <platform>-gateway-tls
	missing := fmt.Sprintf("Ingress %s/gateway serves TLS with Secret %s, named by spec.gateway.ingress.tlsSecretName, which does not exist", ns, secret)

	r := runCmd(t, "plan", "-f", file, kc)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, missing) {
		t.Fatalf("plan without the Secret: exit %d; want 0 and %q:\n%s\n%s", r.code, missing, r.stdout, r.stderr)
	}
	r = runCmd(t, "apply", "-f", file, kc)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, missing) {
		t.Fatalf("apply without the Secret: exit %d; want 0 and %q:\n%s\n%s", r.code, missing, r.stdout, r.stderr)
	}
	if _, err := c.Kube.NetworkingV1().Ingresses(ns).Get(t.Context(), "gateway", metav1.GetOptions{}); err != nil {
		t.Fatalf("apply did not install the Ingress: %v", err)
	}

	const cert, key = "not-a-real-certificate-value", "not-a-real-key-value"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: ns}, Data: map[string][]byte{corev1.TLSCertKey: []byte(cert)}}
	if _, err := c.Kube.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	noKey := fmt.Sprintf("Ingress %s/gateway serves TLS with Secret %s, named by spec.gateway.ingress.tlsSecretName, which has no key tls.key", ns, secret)
	if r := runCmd(t, "plan", "-f", file, kc); r.code != 0 || !strings.Contains(r.stdout+r.stderr, noKey) || strings.Contains(r.stdout+r.stderr, cert) {
		t.Fatalf("plan with a Secret lacking tls.key: exit %d; want 0 and %q, and no value:\n%s\n%s", r.code, noKey, r.stdout, r.stderr)
	}
	s.Data[corev1.TLSPrivateKeyKey] = []byte(key)
	if _, err := c.Kube.CoreV1().Secrets(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"plan", "apply"} {
		r := runCmd(t, cmd, "-f", file, kc)
		out := r.stdout + r.stderr
		if r.code != 0 || strings.Contains(out, "serves TLS with Secret") || strings.Contains(out, cert) || strings.Contains(out, key) {
			t.Fatalf("%s with the Secret whole: exit %d; want 0 and no warning:\n%s\n%s", cmd, r.code, r.stdout, r.stderr)
		}
	}
}
