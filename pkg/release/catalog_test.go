/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestDefaultCatalog(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Versions(), ","); got != "1.5.0,1.6.0" {
		t.Fatalf("versions = %s, want 1.5.0,1.6.0", got)
	}
	r, err := c.Get("1.6.0")
	if err != nil {
		t.Fatal(err)
	}
	img, err := r.Image("ontology-service", "registry.example.com/coomia-dip/", "")
	if err != nil || img != "registry.example.com/coomia-dip/ontology-service:1.6.0" {
		t.Fatalf("image = %q, %v", img, err)
	}
	if img, _ := r.Image("kafka", "x", ""); !strings.HasPrefix(img, "docker.io/apache/kafka:") {
		t.Fatalf("kafka image = %q, want pinned", img)
	}
	if _, err := c.Get("9.9.9"); err == nil || !strings.Contains(err.Error(), "known: 1.5.0, 1.6.0") {
		t.Fatalf("unknown version error = %v, want the known versions listed", err)
	}
}

func TestCanUpgrade(t *testing.T) {
	r := Release{Version: "1.6.0", UpgradeFrom: ">= 1.5.0, < 1.6.0"}
	tests := []struct {
		installed string
		wantErr   string
	}{
		{"1.5.0", ""},
		{"1.5.3", ""},
		{"1.6.0", "already installed"},
		{"1.7.0", "downgrades are refused"},
		{"1.4.0", "not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.installed, func(t *testing.T) {
			err := r.CanUpgrade(tc.installed)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("CanUpgrade(%s) = %v, want %q", tc.installed, err, tc.wantErr)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	fsys := fstest.MapFS{"r/bad.yaml": {Data: []byte("kind: Release\nversion: 1.0.0\ncomponents: {x: {image: a, name: b}}\n")}}
	if _, err := Load(fsys, "r", ""); err == nil || !strings.Contains(err.Error(), "component x") {
		t.Fatalf("Load = %v, want an error naming component x", err)
	}
	if _, err := Parse([]byte("kind: Release\nversion: 1.0\nbogus: 1\n")); err == nil {
		t.Fatal("want unknown-field error")
	}
}
