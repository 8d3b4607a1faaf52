/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/certs"
)

// IsCertificate reports whether obj is a Secret whose certificate apply issues in the
// cluster (the platform CA or a serving certificate); like a generated Secret, it is
// rendered without values and never applied as rendered.
func IsCertificate(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetAnnotations()[v1alpha1.AnnotationCertificate]
	return ok && isSecret(obj)
}

// IsCertificateAuthority reports whether obj is the platform CA's Secret: like a
// generated Secret it is data, kept by prune and uninstall, since every certificate
// the platform's pods trust descends from it.
func IsCertificateAuthority(obj *unstructured.Unstructured) bool {
	return IsCertificate(obj) && obj.GetAnnotations()[v1alpha1.AnnotationCertificate] == v1alpha1.CertificateCA
}

// CertificateDNSNames are the DNS names a serving certificate Secret asks for.
func CertificateDNSNames(obj *unstructured.Unstructured) []string {
	var out []string
	for _, n := range strings.Split(obj.GetAnnotations()[v1alpha1.AnnotationCertificateDNS], ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// CertificateIssuer is the name of the CA Secret that signs a serving certificate.
func CertificateIssuer(obj *unstructured.Unstructured) string {
	return obj.GetAnnotations()[v1alpha1.AnnotationCertificateIssuer]
}

// planCertificate plans a certificate Secret: created when absent; the CA, once there,
// is kept; a serving certificate is re-issued (an update of its masked values, and a
// warning saying why) when certs.ReissueReason says so against the live CA, else kept.
// Only certificates are read, never a key. ca is the live CA Secret, nil when absent.
func planCertificate(obj, live, ca *unstructured.Unstructured, now time.Time) (Change, string) {
	if live == nil {
		return createChange(obj), ""
	}
	ch := Change{Action: ActionUnchanged, Object: RefOf(obj), ResourceVersion: live.GetResourceVersion()}
	if IsCertificateAuthority(obj) {
		return ch, ""
	}
	reason := ReissueReason(obj, live, ca, now)
	if reason == "" {
		return ch, ""
	}
	ch.Action, ch.Desired = ActionUpdate, obj
	for _, k := range []string{certs.KeyCA, certs.KeyCert, certs.KeyKey, certs.KeyCombined} {
		ch.Fields = append(ch.Fields, FieldChange{Path: "data." + k, Old: Masked, New: Masked})
	}
	return ch, fmt.Sprintf("%s: the certificate is re-issued: %s", RefOf(obj), reason)
}

// ReissueReason says why the live serving certificate Secret live of the rendered obj
// must be issued again, or "" when it may stay. ca is the live CA Secret, nil when it
// does not exist yet (then it is new, and no certificate chains to it).
func ReissueReason(obj, live, ca *unstructured.Unstructured, now time.Time) string {
	leaf, err := secretCertificate(live, certs.KeyCert)
	if err != nil {
		return "it holds no certificate"
	}
	if ca == nil {
		return "the platform CA is new"
	}
	caCert, err := secretCertificate(ca, certs.KeyCert)
	if err != nil {
		// apply refuses to sign with it and says why; nothing to compare with.
		caCert = nil
	}
	return certs.ReissueReason(leaf, caCert, CertificateDNSNames(obj), now)
}

// secretCertificate parses the certificate under key of a live Secret (its data, as
// the API returns it, base64).
func secretCertificate(secret *unstructured.Unstructured, key string) (*x509.Certificate, error) {
	enc, _, _ := unstructured.NestedString(secret.Object, "data", key)
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(data) == 0 {
		return nil, fmt.Errorf("no %s", key)
	}
	return certs.ParseCertificate(data)
}
