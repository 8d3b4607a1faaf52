/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// TestIngressTLSSecrets: an Ingress's tls Secret is checked unless the platform gets
// it created: a Secret it renders, the Secret of a cert-manager Certificate it
// renders, or an Ingress annotated for cert-manager's ingress-shim.
func TestIngressTLSSecrets(t *testing.T) {
	obj := func(apiVersion, kind, name string, annotations map[string]string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": "onto"}, "spec": spec}}
		u.SetAnnotations(annotations)
		return u
	}
	ingress := func(name string, annotations map[string]string, secrets ...string) *unstructured.Unstructured {
		var tls []any
		for _, s := range secrets {
			tls = append(tls, map[string]any{"secretName": s, "hosts": []any{"onto.example.com"}})
		}
		return obj("networking.k8s.io/v1", "Ingress", name, annotations, map[string]any{"tls": tls})
	}
	tests := []struct {
		name string
		objs []*unstructured.Unstructured
		want []IngressTLSSecret
	}{
		{"the user's Secret", []*unstructured.Unstructured{ingress("gateway", nil, "onto-gateway-tls")},
			[]IngressTLSSecret{{Ingress: "gateway", Secret: "onto-gateway-tls", Field: "spec.gateway.ingress.tlsSecretName"}}},
		{"a Secret the platform renders", []*unstructured.Unstructured{
			obj("v1", "Secret", "gateway-tls", nil, nil), ingress("gateway", nil, "gateway-tls")}, nil},
		{"a cert-manager Certificate the platform renders", []*unstructured.Unstructured{
			ingress("gateway", nil, "gateway-tls"),
			obj("cert-manager.io/v1", "Certificate", "gateway-tls", nil, map[string]any{"secretName": "gateway-tls"})}, nil},
		{"cert-manager's ingress-shim", []*unstructured.Unstructured{
			ingress("gateway", map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}, "onto-gateway-tls")}, nil},
		{"an Ingress of a patch, two entries", []*unstructured.Unstructured{ingress("extra", nil, "a-tls", "b-tls")},
			[]IngressTLSSecret{{Ingress: "extra", Secret: "a-tls"}, {Ingress: "extra", Secret: "b-tls"}}},
		{"no tls", []*unstructured.Unstructured{ingress("gateway", nil)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ingressTLSSecrets([]render.Plane{{Name: "gateway", Objects: tc.objs}})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
