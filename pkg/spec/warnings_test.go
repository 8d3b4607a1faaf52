/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

const warningsBase = `apiVersion: onto.paas/v1alpha1
kind: OntoPlatform
metadata:
  name: onto-test
  namespace: onto-system
spec:
  version: "1.5.0"
`

// TestWarnings: an enabled Ingress with no namespace admitted to the gateway is a
// warning on spec.tenancy.networkPolicy.ingressNamespaces, not an error; every other
// combination says nothing.
func TestWarnings(t *testing.T) {
	ingress := "  gateway:\n    ingress: {enabled: true, host: onto.example.com}\n"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "defaults", yaml: ingress},
		{name: "no ingress namespace", yaml: ingress + "  tenancy:\n    networkPolicy: {ingressNamespaces: []}\n",
			want: []string{"spec.tenancy.networkPolicy.ingressNamespaces"}},
		{name: "no ingress namespace, an allowed one", yaml: ingress + "  tenancy:\n    networkPolicy: {ingressNamespaces: [], allowedNamespaces: [edge]}\n"},
		{name: "no ingress namespace, isolation off", yaml: ingress + "  tenancy:\n    networkPolicy: {ingressNamespaces: [], isolate: false}\n"},
		{name: "no ingress namespace, no ingress", yaml: "  tenancy:\n    networkPolicy: {ingressNamespaces: []}\n"},
		{name: "another ingress namespace", yaml: ingress + "  tenancy:\n    networkPolicy: {ingressNamespaces: [traefik]}\n"},
	}
	v := newValidator(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := v.Load("platform.yaml", []byte(warningsBase+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range spec.Warnings(ps[0]) {
				got = append(got, w.Field)
				if !strings.Contains(w.Message, "isolate: false") {
					t.Errorf("message %q does not say the way out", w.Message)
				}
			}
			equal(t, "warnings", strings.Join(got, " "), strings.Join(tc.want, " "))
		})
	}
}

// TestEmptyNamespaceListsSurvive: "[]" admits no namespace, and the defaulted type
// keeps it so: marshalled (as apply sends the platform) it is still [], which the API
// server would not default again, while an absent list gets the default.
func TestEmptyNamespaceListsSurvive(t *testing.T) {
	v := newValidator(t)
	ps, err := v.Load("platform.yaml", []byte(warningsBase+"  tenancy:\n    networkPolicy: {ingressNamespaces: []}\n"))
	if err != nil {
		t.Fatal(err)
	}
	np := ps[0].Spec.Tenancy.NetworkPolicy
	if np.IngressNamespaces == nil || len(np.IngressNamespaces) != 0 {
		t.Errorf("ingressNamespaces = %#v, want an empty list", np.IngressNamespaces)
	}
	equal(t, "monitoring (default)", strings.Join(np.MonitoringNamespaces, ","), "monitoring")
	data, err := json.Marshal(ps[0].Spec.Tenancy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ingressNamespaces":[]`) {
		t.Errorf("marshalled tenancy %s lost the empty ingressNamespaces", data)
	}
	// And back through validation, as the API server would see it.
	again := ps[0].DeepCopy()
	if err := v.Validate(again); err != nil {
		t.Fatal(err)
	}
	if got := again.Spec.Tenancy.NetworkPolicy.IngressNamespaces; got == nil || len(got) != 0 {
		t.Errorf("after a second validation ingressNamespaces = %#v, want an empty list", got)
	}
	equal(t, "podSecurity", again.Spec.Tenancy.PodSecurity, v1alpha1.PodSecurityEnforce)
}
