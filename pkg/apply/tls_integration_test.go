/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"crypto/tls"
	"crypto/x509"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/certs"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// TestApplyTLSCertificates installs a small platform with tlsEnabled and reads its
// certificates back from the cluster: every serving certificate chains to the platform
// CA, carries its service's DNS names and its own key; a re-apply writes none of them;
// an apply 340 days later re-issues the serving certificates (within 30 days of their
// end) under the same CA.
func TestApplyTLSCertificates(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.platform.Spec.Global.TLSEnabled = true
	e.mustApply()

	ctx := t.Context()
	secrets := e.clients.Kube.CoreV1().Secrets(e.platform.Namespace)
	caName := e.platform.Name + "-ca"
	caSecret, err := secrets.Get(ctx, caName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the CA Secret: %v", err)
	}
	ca, err := certs.ParseCA(caSecret.Data[certs.KeyCert], caSecret.Data[certs.KeyKey])
	if err != nil {
		t.Fatalf("the CA Secret %s: %v", caName, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	// checkLeaves verifies every serving certificate and returns their resourceVersions.
	checkLeaves := func(now time.Time) map[string]string {
		t.Helper()
		liveCA, err := secrets.Get(ctx, caName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the CA Secret: %v", err)
		}
		versions := map[string]string{caName: liveCA.ResourceVersion}
		n := 0
		for _, obj := range e.desired().Objects() {
			if !plan.IsCertificate(obj) || plan.IsCertificateAuthority(obj) {
				continue
			}
			n++
			s, err := secrets.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Secret %s: %v", obj.GetName(), err)
			}
			versions[s.Name] = s.ResourceVersion
			if string(s.Type) != "kubernetes.io/tls" {
				t.Errorf("Secret %s has type %s", s.Name, s.Type)
			}
			if _, err := tls.X509KeyPair(s.Data[certs.KeyCert], s.Data[certs.KeyKey]); err != nil {
				t.Errorf("Secret %s: the certificate and key do not pair: %v", s.Name, err)
			}
			if _, err := tls.X509KeyPair(s.Data[certs.KeyCombined], s.Data[certs.KeyCombined]); err != nil {
				t.Errorf("Secret %s: %s does not hold the key and certificate: %v", s.Name, certs.KeyCombined, err)
			}
			if string(s.Data[certs.KeyCA]) != string(ca.CertPEM) {
				t.Errorf("Secret %s: ca.crt is not the platform CA's certificate", s.Name)
			}
			leaf, err := certs.ParseCertificate(s.Data[certs.KeyCert])
			if err != nil {
				t.Fatalf("Secret %s: %v", s.Name, err)
			}
			names := plan.CertificateDNSNames(obj)
			if len(names) < 4 || !strings.HasPrefix(names[0], strings.TrimSuffix(s.Name, "-tls")) {
				t.Errorf("Secret %s asks for the DNS names %v", s.Name, names)
			}
			for _, name := range names {
				// A wildcard covers each pod of a StatefulSet: verify one.
				name = strings.Replace(name, "*", strings.TrimSuffix(s.Name, "-tls")+"-0", 1)
				if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: now}); err != nil {
					t.Errorf("Secret %s does not verify for %s against the platform CA: %v", s.Name, name, err)
				}
			}
		}
		if n < 3 {
			t.Fatalf("%d serving certificates rendered, want postgres's and one per service", n)
		}
		return versions
	}
	before := checkLeaves(time.Now())

	// A plan finds nothing to do, and a second apply writes no certificate.
	if p := e.plan(e.desired()); p.HasChanges() || len(p.Warnings) > 0 {
		t.Fatalf("plan after apply: %+v, warnings %v; want no changes", p.Summary, p.Warnings)
	}
	e.mustApply()
	if after := checkLeaves(time.Now()); !maps.Equal(before, after) {
		t.Errorf("a second apply changed certificate Secrets: resourceVersions %v, then %v", before, after)
	}

	// 340 days on, each serving certificate is within 30 days of its end: the plan
	// says so, apply re-issues them, and the CA stays.
	later := time.Now().Add(340 * 24 * time.Hour)
	p, err := (&plan.Planner{Clients: e.clients, Now: func() time.Time { return later }}).Plan(ctx, e.desired())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != len(before)-1 {
		t.Errorf("plan 340 days later warns %v, want one re-issue per serving certificate", p.Warnings)
	}
	a := &apply.Applier{Clients: e.clients, Now: func() time.Time { return later }}
	opts := testOptions()
	opts.Release = ontotest.Release(t, e.platform.Spec.Version)
	if _, err := a.Apply(ctx, e.desired(), opts); err != nil {
		t.Fatalf("apply 340 days later: %v", err)
	}
	reissued := checkLeaves(later)
	for name, v := range reissued {
		if changed := v != before[name]; changed != (name != caName) {
			t.Errorf("Secret %s: resourceVersion %s, then %s; want the CA kept and every serving certificate re-issued", name, before[name], v)
		}
	}
}
