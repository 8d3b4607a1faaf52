/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
)

// TestMarshalYAMLMatchesSigsYAML: marshalYAML prints every rendered object of every
// example, and values JSON would change (whole floats, keys go-yaml sorts by number,
// strings YAML reads as other types, HTML characters, empty collections), exactly as
// sigs.k8s.io/yaml.Marshal does.
func TestMarshalYAMLMatchesSigsYAML(t *testing.T) {
	objects := []map[string]any{{
		"floats":  []any{3.0, 0.5, -2.0, 1e-7, 1.5e10, 0.0},
		"ints":    []any{int64(0), int64(-7), int64(1) << 40},
		"keys":    map[string]any{"a10": 1, "a9": 2, "B": 3, "a": 4, "10": 5, "9": 6, "a.b/c": 7},
		"strings": []any{"true", "1.5", "1.5.0", "0755", "null", "~", "", " lead", "a: b", "<b>&amp;</b>", "line 1\nline 2\n", "ünïcode"},
		"empty":   map[string]any{"map": map[string]any{}, "list": []any{}, "nil": nil},
		"bools":   []any{true, false},
	}}
	for _, example := range []string{"minimal.yaml", "platform.yaml", "tenant.yaml", "external.yaml"} {
		d := ontotest.Desired(t, ontotest.Example(t, example, "yaml-test"))
		for _, o := range d.Objects() {
			objects = append(objects, o.Object)
		}
		objects = append(objects, d.Platform.Object)
	}
	for _, obj := range objects {
		want, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalYAML(obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("marshalYAML differs from sigs.k8s.io/yaml (-want +got):\n%s", diff)
		}
	}
	if len(objects) < 100 {
		t.Fatalf("compared %d objects, want the examples' rendered objects too", len(objects))
	}
}
