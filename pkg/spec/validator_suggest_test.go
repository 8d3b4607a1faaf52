/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"maps"
	"slices"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{a: "", b: "", want: 0},
		{a: "storage", b: "storage", want: 0},
		{a: "storag", b: "storage", want: 1},
		{a: "replcias", b: "replicas", want: 1}, // a swap of neighbours is one edit
		{a: "sotrage", b: "storage", want: 1},
		{a: "hostname", b: "host", want: 4},
		{a: "", b: "tls", want: 3},
		{a: "ca", b: "abc", want: 3}, // optimal string alignment, not full Damerau
		{a: "ünïcode", b: "unicode", want: 2},
	}
	for _, tc := range tests {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"enabled", "host", "labels", "replicas", "storage", "storageClass", "tls"}
	tests := []struct {
		name, want string
	}{
		{name: "storag", want: "storage"},
		{name: "Storage", want: "storage"},
		{name: "STORAGECLASS", want: "storageClass"}, // case alone, however many letters
		{name: "lables", want: "labels"},
		{name: "enabeld", want: "enabled"},
		{name: "tl", want: "tls"},
		{name: "hostname", want: ""},
		{name: "colour", want: ""},
		{name: "ab", want: ""}, // two edits from many short names, so no guess
		{name: "storage", want: ""},
	}
	for _, tc := range tests {
		if got := suggest(tc.name, known); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRequiredFieldsHaveMessages: every field the CRD's schema requires has its own
// words in requiredDetail, so a new required field cannot fall back to the generic
// message unnoticed.
func TestRequiredFieldsHaveMessages(t *testing.T) {
	s, err := defaultCRDSchema()
	if err != nil {
		t.Fatal(err)
	}
	v := &Validator{schema: s}
	var paths []string
	var walk func(n *structuralschema.Structural, path string)
	walk = func(n *structuralschema.Structural, path string) {
		if n.ValueValidation != nil {
			for _, r := range n.ValueValidation.Required {
				paths = append(paths, strings.TrimPrefix(path+"."+r, "."))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(n.Properties)) {
			if path == "" && name == "status" { // never validated: see check
				continue
			}
			child := n.Properties[name]
			walk(&child, strings.TrimPrefix(path+"."+name, "."))
		}
		if n.Items != nil {
			walk(n.Items, path+"[0]")
		}
		if ap := n.AdditionalProperties; ap != nil && ap.Structural != nil {
			walk(ap.Structural, path+".key")
		}
	}
	walk(s.structural, "")
	if len(paths) < 4 {
		t.Fatalf("found only %d required fields (%v); the walk is broken", len(paths), paths)
	}
	for _, p := range paths {
		if d := v.requiredDetail(p); strings.HasPrefix(d, "required field ") {
			t.Errorf("%s: generic message %q; give it its own words in requiredDetail", p, d)
		}
	}
	if got, want := v.requiredDetail("spec.other.thing"), `required field "thing" is missing`; got != want {
		t.Errorf("fallback = %q, want %q", got, want)
	}
}

// TestIssueText: no rendering of an issue has an empty segment ("spec: " or ": :").
func TestIssueText(t *testing.T) {
	tests := []struct {
		issue Issue
		want  string
	}{
		{issue: Issue{Field: "spec.version", Type: "Required value", Message: "the platform's release version is required"},
			want: "spec.version: Required value: the platform's release version is required"},
		{issue: Issue{Field: "spec.gateway.replicas", Type: "Invalid value", Value: "-1", Message: "should be greater than or equal to 0"},
			want: "spec.gateway.replicas: Invalid value: -1: should be greater than or equal to 0"},
		{issue: Issue{Field: "spec.a[1]", Type: "Duplicate value", Value: `{"name":"x"}`},
			want: `spec.a[1]: Duplicate value: {"name":"x"}`},
		{issue: Issue{Field: "spec.x.storag", Type: "Forbidden", Message: `unknown field "storag", did you mean "storage"?`},
			want: `spec.x.storag: unknown field "storag", did you mean "storage"?`},
		{issue: Issue{Field: "spec.x", Type: "Forbidden", Message: "not allowed"},
			want: "spec.x: Forbidden: not allowed"},
		{issue: Issue{Type: "Invalid value", Message: "invalid YAML: did not find expected key"},
			want: "invalid YAML: did not find expected key"},
		{issue: Issue{Type: "Internal error", Message: "convert to OntoPlatform: boom"},
			want: "Internal error: convert to OntoPlatform: boom"},
		{issue: Issue{Field: "spec", Type: "Required value"}, want: "spec: Required value"},
	}
	for _, tc := range tests {
		if got := tc.issue.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	if got := (Issue{Line: 3}).Location("p.yaml"); got != "p.yaml:3" {
		t.Errorf("Location = %q", got)
	}
	if got := (Issue{}).Location("p.yaml"); got != "p.yaml" {
		t.Errorf("Location without a line = %q", got)
	}
}
