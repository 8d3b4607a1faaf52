/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// certManagerIngressAnnotations make cert-manager's ingress-shim issue the Secrets of
// an Ingress's tls entries.
var certManagerIngressAnnotations = []string{"cert-manager.io/issuer", "cert-manager.io/cluster-issuer"}

// IngressTLSSecret is the Secret a rendered Ingress serves TLS with that nothing the
// platform renders creates: the user does, or a tool the platform does not drive.
type IngressTLSSecret struct {
	// Ingress is the Ingress's name, in the platform's namespace.
	Ingress string `json:"ingress"`
	// Secret is the name of the Secret, in the same namespace.
	Secret string `json:"secret"`
	// Field is the spec field that names the Secret; empty when none does (an Ingress
	// of a patch).
	Field string `json:"field,omitempty"`
}

// ingressTLSSecrets are the Secrets of the rendered Ingresses' tls entries, but those
// the platform itself gets created: a Secret it renders (a certificate apply issues),
// the Secret of a cert-manager Certificate it renders, or any Secret of an Ingress that
// a cert-manager issuer annotation hands to cert-manager.
func ingressTLSSecrets(planes []render.Plane) []IngressTLSSecret {
	created := map[string]bool{}
	var ingresses []*unstructured.Unstructured
	for _, pl := range planes {
		for _, obj := range pl.Objects {
			gvk := obj.GroupVersionKind()
			switch {
			case gvk.Group == "" && gvk.Kind == "Secret":
				created[obj.GetName()] = true
			case gvk.Group == "cert-manager.io" && gvk.Kind == "Certificate":
				if name, _, _ := unstructured.NestedString(obj.Object, "spec", "secretName"); name != "" {
					created[name] = true
				}
			case gvk.Group == "networking.k8s.io" && gvk.Kind == "Ingress":
				ingresses = append(ingresses, obj)
			}
		}
	}
	var out []IngressTLSSecret
	for _, ing := range ingresses {
		if slices.ContainsFunc(certManagerIngressAnnotations, func(k string) bool { return ing.GetAnnotations()[k] != "" }) {
			continue
		}
		entries, _, _ := unstructured.NestedSlice(ing.Object, "spec", "tls")
		for _, e := range entries {
			name, _, _ := unstructured.NestedString(asMap(e), "secretName")
			if name == "" || created[name] {
				continue
			}
			s := IngressTLSSecret{Ingress: ing.GetName(), Secret: name}
			if ing.GetName() == v1alpha1.ComponentGateway {
				s.Field = "spec.gateway.ingress.tlsSecretName"
			}
			out = append(out, s)
		}
	}
	return out
}

// ingressTLSWarnings checks d's Ingress TLS Secrets in the cluster and warns of each
// that does not exist or lacks a key of a kubernetes.io/tls Secret: the ingress
// controller then serves its own default certificate, and doctor fails the platform
// (ONTO-TLS-501). A warning, not a refusal: a tool the platform does not drive may
// create the Secret later. The Secrets are read from the API server, as user Secrets
// are (missingSecrets), and only their keys are kept. nsExists false means none can
// exist.
func (pl *Planner) ingressTLSWarnings(ctx context.Context, d *Desired, nsExists bool) ([]string, error) {
	var out []string
	for _, s := range d.IngressTLSSecrets {
		named := ""
		if s.Field != "" {
			named = ", named by " + s.Field + ","
		}
		fix := fmt.Sprintf("create it (kubectl -n %s create secret tls %s --cert=tls.crt --key=tls.key), or have cert-manager issue it "+
			"(a cert-manager.io/cluster-issuer annotation in spec.gateway.ingress.annotations)", d.Namespace, s.Secret)
		var secret *corev1.Secret
		if nsExists {
			var err error
			secret, err = pl.Clients.Kube.CoreV1().Secrets(d.Namespace).Get(ctx, s.Secret, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				secret = nil
			case err != nil:
				return nil, fmt.Errorf("read Secret %s/%s of Ingress %s: %w", d.Namespace, s.Secret, s.Ingress, err)
			}
		}
		if secret == nil {
			out = append(out, fmt.Sprintf("Ingress %s/%s serves TLS with Secret %s%s which does not exist: "+
				"the ingress controller serves its default certificate instead until it does; %s",
				d.Namespace, s.Ingress, s.Secret, named, fix))
			continue
		}
		var missing []string
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := secret.Data[k]; !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("Ingress %s/%s serves TLS with Secret %s%s which has no key %s: "+
				"the ingress controller serves its default certificate instead until it does; store the PEM certificate under %s and its key under %s",
				d.Namespace, s.Ingress, s.Secret, named, strings.Join(missing, ", "), corev1.TLSCertKey, corev1.TLSPrivateKeyKey))
		}
	}
	return out, nil
}
