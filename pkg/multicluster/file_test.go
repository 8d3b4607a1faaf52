/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package multicluster_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/multicluster"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// contexts are the kubeconfig's contexts the test files are checked against.
var contexts = []string{"dev", "prod-eu", "prod-us", "staging"}

// TestParse reads each file of testdata/TestParse and compares what a user sees (the
// error, or the fleet as JSON) with its golden file.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		// wantFields are fields an error must name, with their lines.
		wantFields []string
	}{
		{name: "valid"},
		{name: "unknown-context", wantFields: []string{"unknown-context.yaml:11: waves[1].clusters[1].context"}},
		{name: "unknown-field", wantFields: []string{
			"unknown-field.yaml:6: waves[0].maxparallel", "unknown-field.yaml:9: waves[0].clusters[0].patchs"}},
		{name: "many-errors", wantFields: []string{
			"many-errors.yaml:1: apiVersion", "many-errors.yaml:3: platforms", "many-errors.yaml:4: maxFailures",
			"many-errors.yaml:6: waves[0].name", "many-errors.yaml:7: waves[0].maxParallel",
			"many-errors.yaml:10: waves[0].clusters[1].context", "many-errors.yaml:12: waves[1].clusters",
			"many-errors.yaml:13: waves[2].name", "many-errors.yaml:14: waves[2].clusters[0].context",
			"many-errors.yaml:17: waves[2].clusters[1].patches[0].target"}},
		{name: "duplicate-key", wantFields: []string{"duplicate-key.yaml:8: waves[0].clusters[0].context"}},
		{name: "syntax", wantFields: []string{"syntax.yaml:3:"}},
		{name: "wrong-type", wantFields: []string{"wrong-type.yaml:4: waves.maxParallel"}},
		{name: "empty", wantFields: []string{"the file is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "TestParse")
			path := filepath.Join(dir, tc.name+".yaml")
			f, err := multicluster.Load(path, contexts)
			var got string
			if err != nil {
				var serr *spec.Error
				if !errors.As(err, &serr) {
					t.Fatalf("error is a %T, not a *spec.Error: %v", err, err)
				}
				got = strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			} else {
				b, err := json.MarshalIndent(struct {
					File          multicluster.File `json:"file"`
					PlatformPaths []string          `json:"platformPaths"`
				}{f.File, f.PlatformPaths}, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = strings.ReplaceAll(string(b), filepath.ToSlash(dir)+"/", "")
			}
			if len(tc.wantFields) == 0 && err != nil {
				t.Fatalf("want no error, got:\n%v", err)
			}
			for _, w := range tc.wantFields {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			golden.Assert(t, []byte(got+"\n"), filepath.Join(dir, tc.name+".golden"))
		})
	}
}

// TestClusters lists the members of a fleet in wave order with their field paths.
func TestClusters(t *testing.T) {
	f, err := multicluster.Load(filepath.Join("testdata", "TestParse", "valid.yaml"), contexts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range f.Clusters() {
		got = append(got, m.DisplayName()+"@"+m.Wave+"="+m.Path.String())
	}
	want := "dev@canary=waves[0].clusters[0] prod-eu@production=waves[1].clusters[0] us@production=waves[1].clusters[1]"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("members:\n got %s\nwant %s", s, want)
	}
}

// TestDocsFleet: the fleet file docs/apply.md shows is valid.
func TestDocsFleet(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "apply.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```yaml\napiVersion: onto.paas/v1alpha1\nkind: Fleet\n")
	if !ok {
		t.Fatal("docs/apply.md shows no fleet file")
	}
	block, _, _ := strings.Cut(rest, "```")
	doc := "apiVersion: onto.paas/v1alpha1\nkind: Fleet\n" + block
	f, err := multicluster.Parse("docs/apply.md", []byte(doc), []string{"dev", "prod-eu", "prod-us"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Clusters()) != 3 || len(f.Waves[1].Clusters[1].Patches) != 1 {
		t.Errorf("docs/apply.md fleet: %+v", f.File)
	}
}
