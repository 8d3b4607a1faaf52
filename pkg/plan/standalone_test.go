/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestStandaloneObjects: generated Secrets and certificate Secrets are left out, each
// noted at its place among the kept objects; an autoscaled Deployment loses its
// create-only spec.replicas (in a copy: the rendered object keeps it); any other
// object, a Deployment of fixed count included, is kept as rendered.
func TestStandaloneObjects(t *testing.T) {
	obj := func(apiVersion, kind, name string, annotations map[string]string, replicas int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": "onto"}}}
		u.SetAnnotations(annotations)
		if replicas > 0 {
			_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
		}
		return u
	}
	ns := obj("v1", "Namespace", "onto", nil, 0)
	ca := obj("v1", "Secret", "onto-ca", map[string]string{v1alpha1.AnnotationCertificate: v1alpha1.CertificateCA}, 0)
	serving := obj("v1", "Secret", "gateway-tls", map[string]string{v1alpha1.AnnotationCertificate: v1alpha1.CertificateServing,
		v1alpha1.AnnotationCertificateIssuer: "onto-ca"}, 0)
	generated := obj("v1", "Secret", "postgres", map[string]string{v1alpha1.AnnotationGenerateKeys: "password,replication-password"}, 0)
	autoscaled := obj("apps/v1", "Deployment", "gateway", map[string]string{v1alpha1.AnnotationReplicas: v1alpha1.ReplicasCreateOnly}, 2)
	fixed := obj("apps/v1", "Deployment", "auth-service", nil, 3)
	// A ConfigMap with the generate annotation is not a Secret: kept.
	cm := obj("v1", "ConfigMap", "odd", map[string]string{v1alpha1.AnnotationGenerateKeys: "x"}, 0)

	kept, left := StandaloneObjects([]*unstructured.Unstructured{ns, ca, serving, autoscaled, generated, fixed, cm})

	var names []string
	for _, k := range kept {
		names = append(names, k.GetKind()+"/"+k.GetName())
	}
	if diff := cmp.Diff([]string{"Namespace/onto", "Deployment/gateway", "Deployment/auth-service", "ConfigMap/odd"}, names); diff != "" {
		t.Errorf("kept objects (-want +got):\n%s", diff)
	}
	var notes []string
	var at []int
	for _, l := range left {
		notes, at = append(notes, l.String()), append(at, l.At)
	}
	wantNotes := []string{
		"Secret onto/onto-ca left out: kubectl onto apply or the watch creates it in the cluster, the platform CA's key and certificate",
		"Secret onto/gateway-tls left out: kubectl onto apply or the watch creates it in the cluster, a key and a certificate signed by the CA of Secret onto-ca",
		"Secret onto/postgres left out: kubectl onto apply or the watch creates it in the cluster, with generated values of password, replication-password",
	}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	// The CA and the serving certificate stood after the Namespace (kept index 1), the
	// generated Secret after the autoscaled Deployment (index 2).
	if diff := cmp.Diff([]int{1, 1, 2}, at); diff != "" {
		t.Errorf("places (-want +got):\n%s", diff)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(kept[1].Object, "spec", "replicas"); found {
		t.Errorf("autoscaled Deployment kept spec.replicas: %v", kept[1].Object["spec"])
	}
	if n, _, _ := unstructured.NestedInt64(autoscaled.Object, "spec", "replicas"); n != 2 {
		t.Errorf("the rendered autoscaled Deployment was changed: spec.replicas %d, want 2", n)
	}
	if n, _, _ := unstructured.NestedInt64(kept[2].Object, "spec", "replicas"); n != 3 {
		t.Errorf("fixed-count Deployment: spec.replicas %d, want 3", n)
	}
}
