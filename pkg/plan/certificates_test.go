/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/certs"
)

func certificateSecret(name string, annotations map[string]string, data map[string][]byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls"}}
	u.SetName(name)
	u.SetNamespace("onto")
	u.SetAnnotations(annotations)
	u.SetResourceVersion("7")
	if data != nil {
		enc := map[string]any{}
		for k, v := range data {
			enc[k] = base64.StdEncoding.EncodeToString(v)
		}
		u.Object["data"] = enc
	}
	return u
}

func TestPlanCertificate(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	dns := []string{"redis", "redis.onto", "redis.onto.svc"}
	ca, err := certs.NewCA("onto/onto-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := certs.NewCA("onto/onto-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := certs.NewLeaf(ca, dns, now)
	if err != nil {
		t.Fatal(err)
	}
	caAnn := map[string]string{v1alpha1.AnnotationCertificate: v1alpha1.CertificateCA}
	leafAnn := map[string]string{
		v1alpha1.AnnotationCertificate:       v1alpha1.CertificateServing,
		v1alpha1.AnnotationCertificateIssuer: "onto-ca",
		v1alpha1.AnnotationCertificateDNS:    strings.Join(dns, ","),
	}
	caLive := certificateSecret("onto-ca", caAnn, map[string][]byte{certs.KeyCert: ca.CertPEM, certs.KeyKey: ca.KeyPEM, certs.KeyCA: ca.CertPEM})
	otherCALive := certificateSecret("onto-ca", caAnn, map[string][]byte{certs.KeyCert: otherCA.CertPEM, certs.KeyKey: otherCA.KeyPEM})
	leafLive := certificateSecret("redis-tls", leafAnn, map[string][]byte{certs.KeyCert: leaf.CertPEM, certs.KeyKey: leaf.KeyPEM, certs.KeyCA: ca.CertPEM})
	renamed := map[string]string{}
	for k, v := range leafAnn {
		renamed[k] = v
	}
	renamed[v1alpha1.AnnotationCertificateDNS] = "cache,cache.onto,cache.onto.svc"

	tests := []struct {
		name        string
		obj, live   *unstructured.Unstructured
		ca          *unstructured.Unstructured
		now         time.Time
		want        Action
		wantWarning string
	}{
		{"CA absent", certificateSecret("onto-ca", caAnn, nil), nil, nil, now, ActionCreate, ""},
		{"CA present is kept", certificateSecret("onto-ca", caAnn, nil), caLive, caLive, now.Add(20 * 365 * 24 * time.Hour), ActionUnchanged, ""},
		{"leaf absent", certificateSecret("redis-tls", leafAnn, nil), nil, caLive, now, ActionCreate, ""},
		{"leaf valid", certificateSecret("redis-tls", leafAnn, nil), leafLive, caLive, now.Add(300 * 24 * time.Hour), ActionUnchanged, ""},
		{"leaf within 30 days of its end", certificateSecret("redis-tls", leafAnn, nil), leafLive, caLive, leaf.Cert.NotAfter.Add(-10 * 24 * time.Hour), ActionUpdate, "expires on"},
		{"leaf of a renamed service", certificateSecret("redis-tls", renamed, nil), leafLive, caLive, now, ActionUpdate, "DNS names"},
		{"leaf of another CA", certificateSecret("redis-tls", leafAnn, nil), leafLive, otherCALive, now, ActionUpdate, "not signed by the platform CA"},
		{"CA gone", certificateSecret("redis-tls", leafAnn, nil), leafLive, nil, now, ActionUpdate, "CA is new"},
		{"leaf without data", certificateSecret("redis-tls", leafAnn, nil), certificateSecret("redis-tls", leafAnn, map[string][]byte{}), caLive, now, ActionUpdate, "holds no certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !IsCertificate(tc.obj) || IsGenerated(tc.obj) {
				t.Fatalf("IsCertificate %v, IsGenerated %v; want a certificate only", IsCertificate(tc.obj), IsGenerated(tc.obj))
			}
			ch, warning := planCertificate(tc.obj, tc.live, tc.ca, tc.now)
			if ch.Action != tc.want {
				t.Errorf("action %s, want %s", ch.Action, tc.want)
			}
			if tc.wantWarning == "" && warning != "" || !strings.Contains(warning, tc.wantWarning) {
				t.Errorf("warning %q, want one saying %q", warning, tc.wantWarning)
			}
			if ch.Action == ActionUpdate {
				if ch.Desired != tc.obj || len(ch.Fields) == 0 || ch.ResourceVersion != "7" {
					t.Errorf("update without the object, fields or resourceVersion: %+v", ch)
				}
				if !strings.Contains(warning, "Secret onto/redis-tls") {
					t.Errorf("warning %q does not name the Secret", warning)
				}
			}
			for _, f := range ch.Fields {
				if f.Old != Masked || f.New != Masked {
					t.Errorf("field %s shows %v → %v, want masked", f.Path, f.Old, f.New)
				}
			}
			for _, pemData := range [][]byte{leaf.KeyPEM, leaf.CertPEM, ca.KeyPEM} {
				if strings.Contains(warning, string(pemData)) || strings.Contains(warning, base64.StdEncoding.EncodeToString(pemData)) {
					t.Errorf("warning %q holds certificate data", warning)
				}
			}
		})
	}
}

// TestServedHint: a plan over a cluster without a kind the platform renders says what
// to install and which spec field turns it off; for cert-manager's Certificate, that
// the services' certificates cannot be issued.
func TestServedHint(t *testing.T) {
	tests := []struct {
		gvk  schema.GroupVersionKind
		want []string
	}{
		{schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}, []string{"cert-manager is not installed", "spec.global.tls.issuerRef"}},
		{schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}, []string{"Prometheus Operator", "spec.observability.metrics.serviceMonitor: false"}},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, []string{"install the CRD of Widget"}},
	}
	for _, tc := range tests {
		got := servedHint(tc.gvk)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("servedHint(%s) = %q, want it to say %q", tc.gvk, got, w)
			}
		}
	}
}
