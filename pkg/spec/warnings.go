/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Warning is something a valid platform says that is probably not what its author
// means. It never stops a command: validate, plan and apply print it and go on.
type Warning struct {
	// Field is the path of the field to change, as in Issue.
	Field string `json:"field"`
	// Message says what goes wrong and what would be right.
	Message string `json:"message"`
}

// Warnings are the warnings of a validated, defaulted platform, in a fixed order.
func Warnings(p *v1alpha1.OntoPlatform) []Warning {
	var out []Warning
	if w, ok := ingressUnreachable(&p.Spec); ok {
		out = append(out, w)
	}
	return out
}

// ingressUnreachable: an Ingress in front of the gateway while the NetworkPolicies
// admit no namespace to it, so the ingress controller's requests are dropped.
func ingressUnreachable(s *v1alpha1.OntoPlatformSpec) (Warning, bool) {
	in := s.Gateway.Ingress
	if in == nil || !in.Enabled || !enabled(s.Gateway.Enabled) {
		return Warning{}, false
	}
	if s.Tenancy == nil || s.Tenancy.NetworkPolicy == nil {
		return Warning{}, false // defaults: isolated, ingress-nginx admitted
	}
	np := s.Tenancy.NetworkPolicy
	// A nil list is the default namespace; only an explicit empty one admits none.
	if !enabled(np.Isolate) || np.IngressNamespaces == nil || len(np.IngressNamespaces) > 0 || len(np.AllowedNamespaces) > 0 {
		return Warning{}, false
	}
	return Warning{
		Field: field.NewPath("spec", "tenancy", "networkPolicy", "ingressNamespaces").String(),
		Message: "spec.gateway.ingress is enabled but no namespace may reach the gateway, so the ingress controller's requests are dropped: " +
			"name the ingress controller's namespace here (such as ingress-nginx), or set spec.tenancy.networkPolicy.isolate: false",
	}, true
}

// enabled reads an optional switch whose schema default is true.
func enabled(p *bool) bool { return p == nil || *p }
