/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"strings"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Certificates of TLS between the platform's services (spec.global.tlsEnabled). Render
// only names them: each is a kubernetes.io/tls Secret without values, whose
// certificate apply issues in the cluster (pkg/certs), so render stays pure and no key
// ever leaves the cluster.

// clusterDomain is the default cluster domain; the certificates carry names with and
// without it, so clients that use either verify.
const clusterDomain = "cluster.local"

// caSecretName is the platform CA's Secret. It carries the platform's name: the CA is
// the trust root of this platform only.
func (b *builder) caSecretName() string { return b.p.Name + "-ca" }

// tlsSecretName is the Secret of a component's serving certificate.
func tlsSecretName(component string) string { return component + "-tls" }

// tlsEnabled reports whether the platform's services talk TLS.
func (b *builder) tlsEnabled() bool { return b.spec.Global.TLSEnabled }

// addTLSCA adds the platform CA's Secret to the tenancy overlay, the first applied, so
// the CA exists before any serving certificate it signs.
func (b *builder) addTLSCA(o *overlay) error {
	if !b.tlsEnabled() {
		return nil
	}
	return o.addObject("ca-secret.yaml", map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "kubernetes.io/tls",
		"metadata": map[string]any{
			"name":        b.caSecretName(),
			"annotations": map[string]string{v1alpha1.AnnotationCertificate: v1alpha1.CertificateCA},
		},
	})
}

// addServingCertificate adds to o the Secret of the serving certificate of the
// component behind Service name; headless, when set, is the StatefulSet's governing
// Service, whose pods' names the certificate covers too.
func (b *builder) addServingCertificate(o *overlay, name, headless string) error {
	if !b.tlsEnabled() {
		return nil
	}
	return o.addObject("tls-secret.yaml", map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "kubernetes.io/tls",
		"metadata": map[string]any{
			"name": tlsSecretName(name),
			"annotations": map[string]string{
				v1alpha1.AnnotationCertificate:       v1alpha1.CertificateServing,
				v1alpha1.AnnotationCertificateIssuer: b.caSecretName(),
				v1alpha1.AnnotationCertificateDNS:    strings.Join(b.serviceDNSNames(name, headless), ","),
			},
		},
	})
}

// serviceDNSNames are the names a client may reach the Service name by, in the
// platform's namespace: short, namespaced, the .svc name the render passes to clients
// (svcHost) and the fully qualified one; for a StatefulSet, every pod's own name under
// its headless Service too (replication and cluster peers dial those).
func (b *builder) serviceDNSNames(name, headless string) []string {
	ns := b.p.Namespace
	out := []string{name, name + "." + ns, svcHost(name, ns), svcHost(name, ns) + "." + clusterDomain}
	if headless != "" {
		out = append(out, "*."+svcHost(headless, ns), "*."+svcHost(headless, ns)+"."+clusterDomain)
	}
	return out
}
