/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

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

// withIssuer is the production example with cert-manager issuing its certificates.
func withIssuer(t testing.TB) (*v1alpha1.OntoPlatform, release.Release) {
	t.Helper()
	p, rel := production(t)
	p.Spec.Global.TLS = &v1alpha1.TLSSpec{IssuerRef: &v1alpha1.IssuerReference{Name: "platform-ca", Kind: "ClusterIssuer"}}
	return p, rel
}

// TestTLSMounts: with tlsEnabled, whoever issues the certificates, the main container
// of every workload has the CA mounted read-only: a server from its own certificate
// Secret (certificate, key and CA), the MinIO setup Job, a client only, the CA's
// certificate alone (no pod ever mounts a key that is not its own).
func TestTLSMounts(t *testing.T) {
	for mode, load := range map[string]func(testing.TB) (*v1alpha1.OntoPlatform, release.Release){"apply": production, "cert-manager": withIssuer} {
		p, rel := load(t)
		for name, tpl := range podTemplates(t, mustRender(t, p, rel)) {
			t.Run(mode+"/"+name, func(t *testing.T) {
				mounts := map[string]corev1.VolumeMount{}
				for _, m := range tpl.Spec.Containers[0].VolumeMounts {
					mounts[m.Name] = m
				}
				own := strings.SplitN(name, "/", 2)[1] + "-tls"
				var withCA []string
				for _, v := range tpl.Spec.Volumes {
					s := v.Secret
					if s == nil || (s.SecretName != p.Name+"-ca" && !strings.HasSuffix(s.SecretName, "-tls")) {
						continue
					}
					keys := map[string]bool{}
					for _, it := range s.Items {
						keys[it.Key] = true
					}
					if s.SecretName != own && (len(s.Items) != 1 || !keys["ca.crt"]) {
						t.Errorf("volume %s mounts keys %v of Secret %s, another's: want ca.crt alone", v.Name, s.Items, s.SecretName)
					}
					if m, ok := mounts[v.Name]; !ok || !m.ReadOnly {
						t.Errorf("volume %s of Secret %s is not mounted read-only in the main container", v.Name, s.SecretName)
					}
					if len(s.Items) == 0 || keys["ca.crt"] {
						withCA = append(withCA, s.SecretName)
					}
				}
				if len(withCA) != 1 {
					t.Fatalf("the main container has the CA from %v, want exactly one Secret", withCA)
				}
				if !strings.HasPrefix(name, "Job/") && withCA[0] != own {
					t.Errorf("the server mounts %s, want its own certificate %s", withCA[0], own)
				}
			})
		}
	}
}

// TestCertManagerCertificates: with issuerRef, one cert-manager Certificate per
// certificate Secret apply would issue, for the same Secret name and DNS names, from
// the issuer; and no certificate Secret nor CA of apply's.
func TestCertManagerCertificates(t *testing.T) {
	p, _ := production(t)
	wantDNS := map[string]string{}
	for name, v := range certificateSecrets(t, p) {
		if v != v1alpha1.CertificateCA {
			wantDNS[name] = strings.TrimPrefix(v, v1alpha1.CertificateServing+" ")
		}
	}
	p, rel := withIssuer(t)
	gotDNS := map[string]string{}
	for _, u := range mustRender(t, p, rel) {
		if _, ok := u.GetAnnotations()[v1alpha1.AnnotationCertificate]; ok {
			t.Errorf("%s %s: apply's certificate with issuerRef set", u.GetKind(), u.GetName())
		}
		if u.GetKind() != "Certificate" {
			continue
		}
		if u.GetAPIVersion() != "cert-manager.io/v1" {
			t.Errorf("Certificate %s is %s", u.GetName(), u.GetAPIVersion())
		}
		secret, _, _ := unstructured.NestedString(u.Object, "spec", "secretName")
		names, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "dnsNames")
		gotDNS[secret] = strings.Join(names, ",")
		issuer, _, _ := unstructured.NestedStringMap(u.Object, "spec", "issuerRef")
		if want := map[string]string{"name": "platform-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}; !cmp.Equal(want, issuer) {
			t.Errorf("Certificate %s: issuerRef %v, want %v", u.GetName(), issuer, want)
		}
	}
	if diff := cmp.Diff(wantDNS, gotDNS); diff != "" {
		t.Errorf("Certificates' Secrets and DNS names against apply's (-want +got):\n%s", diff)
	}
}

// TestPostgresServerSettings: the TLS settings join the base's server settings (the
// replication ones) as -c pairs the base's command hands to the image's entrypoint, for
// one replica and for several; without tlsEnabled there are none.
func TestPostgresServerSettings(t *testing.T) {
	tlsSettings := []string{"ssl=on", "ssl_cert_file=" + postgresTLSDir + "/tls.crt",
		"ssl_key_file=" + postgresTLSDir + "/tls.key", "ssl_ca_file=" + postgresTLSDir + "/ca.crt"}
	for _, tc := range []struct {
		replicas int32
		tls      bool
	}{{1, true}, {3, true}, {1, false}, {3, false}} {
		t.Run(fmt.Sprintf("replicas %d tls %v", tc.replicas, tc.tls), func(t *testing.T) {
			p, rel := production(t)
			p.Spec.Infrastructure.Postgres.Replicas = ptr.To(tc.replicas)
			p.Spec.Global.TLSEnabled = tc.tls
			sts := convert[appsv1.StatefulSet](t, find(mustRender(t, p, rel), "StatefulSet", v1alpha1.ComponentPostgres))
			args := sts.Spec.Template.Spec.Containers[0].Args
			settings := map[string]bool{}
			for i := 0; i < len(args); i += 2 {
				if args[i] != "-c" || i+1 == len(args) {
					t.Fatalf("postgres args %q are not -c pairs", args)
				}
				settings[args[i+1]] = true
			}
			if !settings["wal_level=replica"] {
				t.Errorf("postgres settings %q lack wal_level=replica", args)
			}
			for _, s := range tlsSettings {
				if settings[s] != tc.tls {
					t.Errorf("postgres settings %q: %s present %v, want %v", args, s, settings[s], tc.tls)
				}
			}
		})
	}
}
