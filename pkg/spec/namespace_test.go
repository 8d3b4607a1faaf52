/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

func TestSetNamespaces(t *testing.T) {
	platform := func(name, namespace string) *v1alpha1.OntoPlatform {
		return &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	}
	tests := []struct {
		name string
		// namespaces of the file's platforms, in order; "" is none.
		namespaces []string
		def        spec.NamespaceDefault
		want       []string
		// errHas are fragments the error must hold; none means no error.
		errHas []string
	}{
		{name: "none in the file takes -n", namespaces: []string{""}, def: spec.NamespaceDefault{Namespace: "team-a", Explicit: true}, want: []string{"team-a"}},
		{name: "none in the file takes the context's", namespaces: []string{""}, def: spec.NamespaceDefault{Namespace: "ctx-ns"}, want: []string{"ctx-ns"}},
		{name: "the file's wins over the context's", namespaces: []string{"onto-dev"}, def: spec.NamespaceDefault{Namespace: "default"}, want: []string{"onto-dev"}},
		{name: "the file's equals -n", namespaces: []string{"onto-dev"}, def: spec.NamespaceDefault{Namespace: "onto-dev", Explicit: true}, want: []string{"onto-dev"}},
		{name: "the file's differs from -n", namespaces: []string{"onto-dev"}, def: spec.NamespaceDefault{Namespace: "other", Explicit: true},
			want:   []string{"onto-dev"},
			errHas: []string{"platform.yaml: OntoPlatform p0:", `the namespace from the file "onto-dev" does not match the namespace "other" given with -n`, "--namespace=onto-dev"}},
		{name: "every mismatch is reported, nothing is changed", namespaces: []string{"a", "", "b"}, def: spec.NamespaceDefault{Namespace: "c", Explicit: true},
			want:   []string{"a", "", "b"},
			errHas: []string{"OntoPlatform p0:", `"a" does not match the namespace "c"`, "OntoPlatform p2:", `"b" does not match the namespace "c"`}},
		{name: "an invalid -n is refused when used", namespaces: []string{""}, def: spec.NamespaceDefault{Namespace: "Team_A", Explicit: true},
			want:   []string{""},
			errHas: []string{`platform.yaml: namespace "Team_A"`, "RFC 1123 label"}},
		{name: "an invalid context namespace is harmless when unused", namespaces: []string{"onto-dev"}, def: spec.NamespaceDefault{Namespace: "Bad_NS"}, want: []string{"onto-dev"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ps []*v1alpha1.OntoPlatform
			for i, ns := range tc.namespaces {
				ps = append(ps, platform(fmt.Sprintf("p%d", i), ns))
			}
			err := spec.SetNamespaces("platform.yaml", ps, tc.def)
			switch {
			case len(tc.errHas) == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case len(tc.errHas) > 0 && err == nil:
				t.Fatalf("no error, want one holding %q", tc.errHas)
			}
			for _, frag := range tc.errHas {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("error %q does not hold %q", err, frag)
				}
			}
			for i, p := range ps {
				if p.Namespace != tc.want[i] {
					t.Errorf("platform %d: namespace %q, want %q", i, p.Namespace, tc.want[i])
				}
			}
		})
	}
}
