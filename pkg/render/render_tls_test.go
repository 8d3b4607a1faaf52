/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// certificateSecrets are the rendered certificate Secrets by name: their
// onto.paas/certificate value and, for a serving certificate, its DNS names.
func certificateSecrets(t *testing.T, p *v1alpha1.OntoPlatform) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, u := range mustRender(t, p, mustRelease(t, p)) {
		kind, ok := u.GetAnnotations()[v1alpha1.AnnotationCertificate]
		if !ok {
			continue
		}
		if u.GetKind() != "Secret" {
			t.Errorf("%s %s carries %s", u.GetKind(), u.GetName(), v1alpha1.AnnotationCertificate)
		}
		if typ, _ := u.Object["type"].(string); typ != "kubernetes.io/tls" {
			t.Errorf("Secret %s has type %q, want kubernetes.io/tls", u.GetName(), typ)
		}
		for _, f := range []string{"data", "stringData"} {
			if _, ok := u.Object[f]; ok {
				t.Errorf("Secret %s has %s", u.GetName(), f)
			}
		}
		if kind == v1alpha1.CertificateServing {
			if issuer := u.GetAnnotations()[v1alpha1.AnnotationCertificateIssuer]; issuer != p.Name+"-ca" {
				t.Errorf("Secret %s is issued by %q, want %s-ca", u.GetName(), issuer, p.Name)
			}
			kind += " " + u.GetAnnotations()[v1alpha1.AnnotationCertificateDNS]
		}
		got[u.GetName()] = kind
	}
	return got
}

func mustRelease(t *testing.T, p *v1alpha1.OntoPlatform) release.Release {
	t.Helper()
	_, rel := production(t)
	if rel.Version != p.Spec.Version {
		t.Fatalf("release %s, platform %s", rel.Version, p.Spec.Version)
	}
	return rel
}

// TestCertificateSecrets: with tlsEnabled, one CA and one serving certificate per
// enabled backing service and platform service, with every name a client may use; none
// without it.
func TestCertificateSecrets(t *testing.T) {
	p, _ := production(t)
	if !p.Spec.Global.TLSEnabled {
		t.Fatal("the production example no longer enables TLS")
	}
	ns := p.Namespace
	names := func(svc, headless string) string {
		out := []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}
		if headless != "" {
			out = append(out, "*."+headless+"."+ns+".svc", "*."+headless+"."+ns+".svc.cluster.local")
		}
		return v1alpha1.CertificateServing + " " + strings.Join(out, ",")
	}
	want := map[string]string{p.Name + "-ca": v1alpha1.CertificateCA}
	for _, c := range p.Spec.Components() {
		if !c.Enabled() {
			continue
		}
		if c.Service != nil {
			want[c.Name+"-tls"] = names(c.Name, "")
		} else {
			want[c.Name+"-tls"] = names(c.Name, c.Name+"-headless")
		}
		if c.Name == v1alpha1.ComponentKafka && KafkaDedicatedControllers(c.DesiredReplicas()) {
			ctl := v1alpha1.ComponentKafkaController
			want[ctl+"-tls"] = names(ctl, ctl+"-headless")
		}
	}
	if p.Spec.Infrastructure.Redis.Mode == v1alpha1.RedisSentinel {
		want["redis-sentinel-tls"] = names("redis-sentinel", "redis-sentinel-headless")
	}
	if diff := cmp.Diff(want, certificateSecrets(t, p)); diff != "" {
		t.Errorf("certificate Secrets (-want +got):\n%s", diff)
	}

	p.Spec.Global.TLSEnabled = false
	if got := certificateSecrets(t, p); len(got) > 0 {
		t.Errorf("tlsEnabled false renders certificate Secrets %v", got)
	}
}
