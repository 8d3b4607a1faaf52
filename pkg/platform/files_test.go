/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// platformDoc is a small valid platform named name in its own namespace, with extra
// lines appended to its spec.
func platformDoc(name, specLines string) string {
	return fmt.Sprintf("apiVersion: onto.paas/v1alpha1\nkind: OntoPlatform\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  version: \"1.6.0\"\n%s", name, name, specLines)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadedNames(loaded []Loaded) []string {
	var out []string
	for _, lp := range loaded {
		out = append(out, lp.Platform.Namespace+"/"+lp.Platform.Name)
	}
	return out
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.yaml"), platformDoc("tenant-b", ""))
	writeFile(t, filepath.Join(dir, "a.yml"), platformDoc("tenant-a", "")+"---\n"+platformDoc("tenant-c", ""))
	writeFile(t, filepath.Join(dir, "d.json"), `{"apiVersion":"onto.paas/v1alpha1","kind":"OntoPlatform","metadata":{"name":"tenant-d","namespace":"tenant-d"},"spec":{"version":"1.6.0"}}`)
	writeFile(t, filepath.Join(dir, "README.md"), "not a platform")
	writeFile(t, filepath.Join(dir, "nested", "e.yaml"), platformDoc("tenant-e", ""))

	tests := []struct {
		name      string
		recursive bool
		want      []string
	}{
		// Name order of the files, document order within one.
		{"the directory's own files", false, []string{"tenant-a/tenant-a", "tenant-c/tenant-c", "tenant-b/tenant-b", "tenant-d/tenant-d"}},
		{"with -R, its subdirectories too", true, []string{"tenant-a/tenant-a", "tenant-c/tenant-c", "tenant-b/tenant-b", "tenant-d/tenant-d", "tenant-e/tenant-e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoader(t)
			l.Recursive = tc.recursive
			loaded, err := l.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := loadedNames(loaded); !slices.Equal(got, tc.want) {
				t.Errorf("loaded %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoadManyRefused(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// wantErr are all in the error; wantInvalid are the files of *spec.Errors.
		wantErr     []string
		wantInvalid []string
	}{
		{
			name: "an invalid third document",
			files: map[string]string{"tenants.yaml": platformDoc("tenant-a", "") + "---\n" + platformDoc("tenant-b", "") + "---\n" +
				platformDoc("tenant-c", "  controlPlane:\n    ontologyService:\n      replicas: -1\n")},
			wantErr:     []string{"tenants.yaml:", "spec.controlPlane.ontologyService.replicas"},
			wantInvalid: []string{"tenants.yaml"},
		},
		{
			name: "an invalid file of a directory, and another",
			files: map[string]string{
				"a.yaml": platformDoc("tenant-a", ""),
				"b.yaml": platformDoc("tenant-b", "  controlPlane:\n    ontologyService:\n      replicas: -1\n"),
				"c.yaml": platformDoc("tenant-c", ""),
				"d.yaml": platformDoc("tenant-d", "  version2: x\n"),
			},
			wantErr:     []string{"b.yaml:", "spec.controlPlane.ontologyService.replicas", "d.yaml:", "spec.version2"},
			wantInvalid: []string{"b.yaml", "d.yaml"},
		},
		{
			name:    "one platform twice",
			files:   map[string]string{"a.yaml": platformDoc("tenant-a", ""), "b.yaml": platformDoc("tenant-a", "")},
			wantErr: []string{"OntoPlatform tenant-a/tenant-a is given twice"},
		},
		{
			name: "two platforms in one namespace",
			files: map[string]string{"a.yaml": platformDoc("tenant-a", "") + "---\n" +
				strings.Replace(platformDoc("tenant-b", ""), "namespace: tenant-b", "namespace: tenant-a", 1)},
			wantErr: []string{"OntoPlatforms tenant-a and tenant-b are both in namespace tenant-a: one namespace holds one platform"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			input := dir
			if len(tc.files) == 1 {
				for name := range tc.files {
					input = filepath.Join(dir, name)
				}
			}
			loaded, err := newLoader(t).Load(input, nil)
			if err == nil {
				t.Fatalf("Load returned %v and no error", loadedNames(loaded))
			}
			// Nothing is returned to act on: a caller never runs part of the input.
			if loaded != nil {
				t.Errorf("Load returned %v with its error", loadedNames(loaded))
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
			var invalid []string
			for _, e := range unjoin(err) {
				var se *spec.Error
				if errors.As(e, &se) {
					invalid = append(invalid, filepath.Base(se.File))
				}
			}
			if !slices.Equal(invalid, tc.wantInvalid) {
				t.Errorf("invalid files %v, want %v", invalid, tc.wantInvalid)
			}
		})
	}
}

// unjoin splits an errors.Join error into its errors.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestLoadEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "nested", "a.yaml"), platformDoc("tenant-a", ""))
	_, err := newLoader(t).Load(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "holds no .yaml, .yml, .json file (-R reads its subdirectories too)") {
		t.Errorf("Load of a directory without platform files = %v", err)
	}
}

// TestReadFiles: a directory gives one result per platform file, each with its own
// file name and, when invalid, its own *spec.Error; a file gives one result; a
// directory without platform files is the directory's error.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), platformDoc("tenant-a", ""))
	writeFile(t, filepath.Join(dir, "b.yaml"), platformDoc("tenant-b", "  colour: blue\n"))
	writeFile(t, filepath.Join(dir, "c.yml"), platformDoc("tenant-a", ""))
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a platform")

	files, err := newLoader(t).ReadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		var invalid *spec.Error
		switch {
		case errors.As(f.Err, &invalid):
			got = append(got, fmt.Sprintf("%s: invalid %s line %d", filepath.Base(f.File), invalid.Issues[0].Field, invalid.Issues[0].Line))
		case f.Err != nil:
			t.Fatalf("%s: %v", f.File, f.Err)
		default:
			got = append(got, fmt.Sprintf("%s: %s/%s", filepath.Base(f.File), f.Platforms[0].Namespace, f.Platforms[0].Name))
		}
	}
	want := []string{"a.yaml: tenant-a/tenant-a", "b.yaml: invalid spec.colour line 8", "c.yml: tenant-a/tenant-a"}
	if !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	if err := DistinctNamespaces(files); err == nil || !strings.Contains(err.Error(), "OntoPlatform tenant-a/tenant-a is given twice") {
		t.Errorf("DistinctNamespaces: %v, want tenant-a given twice", err)
	}

	one, err := newLoader(t).ReadFiles(filepath.Join(dir, "a.yaml"))
	if err != nil || len(one) != 1 || one[0].Err != nil || one[0].File != filepath.Join(dir, "a.yaml") {
		t.Errorf("ReadFiles of a file: %+v, %v; want one valid result", one, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := newLoader(t).ReadFiles(empty); err == nil || !strings.Contains(err.Error(), "holds no .yaml") {
		t.Errorf("ReadFiles of an empty directory: %v, want holds no .yaml", err)
	}
}
