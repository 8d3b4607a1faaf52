/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
)

// TestMoveTo: the metadata's name and namespace change, nothing else does.
func TestMoveTo(t *testing.T) {
	in := []byte("# a comment\nmetadata:\n  name: tenant-alpha\n  namespace: tenant-alpha\nspec:\n  version: \"1.5.0\"\n  x:\n    name: kept\n")
	want := "# a comment\nmetadata:\n  name: tenant-007\n  namespace: scale-007\nspec:\n  version: \"1.5.0\"\n  x:\n    name: kept\n"
	if got := string(bench.MoveTo(in, "tenant-007", "scale-007")); got != want {
		t.Errorf("MoveTo:\n got %q\nwant %q", got, want)
	}
	if got := string(bench.MoveTo(in, "", "other")); !strings.Contains(got, "  name: tenant-alpha\n  namespace: other\n") {
		t.Errorf("MoveTo with no name changed the name or missed the namespace: %q", got)
	}
}

// TestWriteFleet: three tenants of the tenant example, one file each, and one manifest
// holding the CRD once, then each tenant's Namespace before its other objects and its
// OntoPlatform last, as many documents as the fleet counts.
func TestWriteFleet(t *testing.T) {
	f, err := bench.WriteFleet(filepath.Join("..", "..", "examples", "tenant.yaml"), t.TempDir(), "scale-x", 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"scale-x-000", "scale-x-001", "scale-x-002"}; strings.Join(f.Namespaces, ",") != strings.Join(want, ",") {
		t.Fatalf("namespaces = %v, want %v", f.Namespaces, want)
	}
	files, err := os.ReadDir(f.Dir)
	if err != nil || len(files) != 3 || files[0].Name() != "tenant-000.yaml" {
		t.Fatalf("platform files = %v (%v), want tenant-000.yaml … tenant-002.yaml", files, err)
	}
	data, err := os.ReadFile(f.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range bytes.Split(data, []byte("---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	if len(objs) != f.Objects {
		t.Fatalf("manifest holds %d objects, the fleet counts %d", len(objs), f.Objects)
	}
	if objs[0].GetKind() != "CustomResourceDefinition" {
		t.Fatalf("first object is a %s, want the CRD", objs[0].GetKind())
	}
	seen := map[string]bool{} // namespaces created so far in the file
	platforms := 0
	for _, o := range objs[1:] {
		switch {
		case o.GetKind() == "Namespace":
			seen[o.GetName()] = true
		case o.GetNamespace() != "" && !seen[o.GetNamespace()]:
			t.Fatalf("%s %s/%s comes before its namespace", o.GetKind(), o.GetNamespace(), o.GetName())
		}
		if o.GetKind() == "OntoPlatform" {
			if want := f.Namespaces[platforms]; o.GetNamespace() != want || o.GetName() != "tenant-00"+string(rune('0'+platforms)) {
				t.Errorf("platform %d is %s/%s, want %s/tenant-00%d", platforms, o.GetNamespace(), o.GetName(), want, platforms)
			}
			platforms++
		}
	}
	if platforms != 3 {
		t.Errorf("manifest holds %d OntoPlatforms, want 3", platforms)
	}
}
