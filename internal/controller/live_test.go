/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/certs"
)

// TestSecretKeysOnly: the watch's cache keeps a Secret's keys, which a plan checks,
// and none of its values.
func TestSecretKeysOnly(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"password": []byte("hunter2")}, StringData: map[string]string{"token": "t0ken"}}
	out, err := secretKeysOnly(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Secret)
	if v, ok := got.Data["password"]; !ok || len(v) != 0 || got.StringData != nil {
		t.Fatalf("secret after the transform: data %q, stringData %q; want the key password without its value", got.Data, got.StringData)
	}
	u, err := cachedUnstructured(got, schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedMap(u.Object, "data")
	if _, ok := data["password"]; !ok || u.GetKind() != "Secret" {
		t.Fatalf("the cached Secret as the planner reads it: %v; want kind Secret and the key password", u.Object)
	}
}

// TestSecretKeysOnlyKeepsCertificates: of a certificate Secret the cache keeps the
// certificates, which are public and which a plan checks for re-issue, and drops the key.
func TestSecretKeysOnlyKeepsCertificates(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.AnnotationCertificate: v1alpha1.CertificateServing}},
		Data:       map[string][]byte{certs.KeyCert: []byte("leaf"), certs.KeyCA: []byte("ca"), certs.KeyKey: []byte("private")},
	}
	out, err := secretKeysOnly(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Secret).Data
	if string(got[certs.KeyCert]) != "leaf" || string(got[certs.KeyCA]) != "ca" {
		t.Errorf("certificates after the transform: %q, %q; want them kept", got[certs.KeyCert], got[certs.KeyCA])
	}
	if v, ok := got[certs.KeyKey]; !ok || len(v) != 0 {
		t.Errorf("key after the transform: %q (present %v); want the key name without its value", v, ok)
	}
}
