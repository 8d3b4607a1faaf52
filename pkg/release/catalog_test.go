/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
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

func TestParseUses(t *testing.T) {
	const head = "kind: Release\nversion: 1.0.0\ncomponents:\n"
	tests := []struct {
		name       string
		components string
		wantErr    string
	}{
		{name: "service with uses", components: "  nessie: {name: nessie, uses: [postgres, minio]}\n"},
		{name: "service using nothing", components: "  gateway: {name: gateway, uses: []}\n"},
		{name: "infrastructure without uses", components: "  postgres: {image: postgres:16}\n"},
		{name: "a component this binary does not know", components: "  search-service: {name: search-service}\n"},
		{name: "service without uses", components: "  gateway: {name: gateway}\n", wantErr: "component gateway: uses is missing"},
		{name: "service with uses: null", components: "  gateway: {name: gateway, uses: null}\n", wantErr: "component gateway: uses is missing"},
		{name: "unknown backing service", components: "  nessie: {name: nessie, uses: [mysql]}\n", wantErr: `component nessie: uses "mysql", which is not a backing service`},
		{name: "platform service as backing service", components: "  nessie: {name: nessie, uses: [auth-service]}\n", wantErr: `uses "auth-service"`},
		{name: "duplicate", components: "  nessie: {name: nessie, uses: [minio, minio]}\n", wantErr: `component nessie: uses "minio" twice`},
		{name: "uses on infrastructure", components: "  kafka: {image: kafka:3, uses: [postgres]}\n", wantErr: "component kafka: uses is only for platform services"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(head + tc.components))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Parse = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestUsesSurvivesJSON: a revision snapshot stores the release as JSON; a service that
// uses nothing must come back as [] (not missing), and Uses must tell the two apart.
func TestUsesSurvivesJSON(t *testing.T) {
	r, err := Parse([]byte("kind: Release\nversion: 1.0.0\ncomponents:\n  gateway: {name: gateway, uses: []}\n  nessie: {name: nessie, uses: [postgres]}\n  postgres: {image: postgres:16}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "null") {
		t.Errorf("JSON %s has a null: infrastructure entries must omit uses", data)
	}
	var back Release
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if uses, err := back.Uses("gateway"); err != nil || uses == nil || len(uses) != 0 {
		t.Errorf("gateway uses after a round trip = %#v, %v; want [] and no error", uses, err)
	}
	if uses, err := back.Uses("nessie"); err != nil || len(uses) != 1 || uses[0] != "postgres" {
		t.Errorf("nessie uses after a round trip = %v, %v; want [postgres]", uses, err)
	}
	old := Release{Version: "1.0.0", Components: map[string]ComponentImage{"gateway": {Name: "gateway"}}}
	if _, err := old.Uses("gateway"); err == nil || !strings.Contains(err.Error(), "names no uses for component gateway") {
		t.Errorf("Uses of an entry without uses = %v, want an error naming the component", err)
	}
}

// TestShippedCatalogUses: every platform service of every shipped release names what
// it uses, and the gateway, which faces the Internet, uses nothing.
func TestShippedCatalogUses(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range c.Versions() {
		r, _ := c.Get(v)
		for _, comp := range (&v1alpha1.OntoPlatformSpec{}).Components() {
			if comp.Service == nil {
				continue
			}
			uses, err := r.Uses(comp.Name)
			if err != nil {
				t.Errorf("release %s: %v", v, err)
			}
			if comp.Name == v1alpha1.ComponentGateway && len(uses) != 0 {
				t.Errorf("release %s: the gateway uses %v, want nothing", v, uses)
			}
		}
	}
}

// TestFillUses: an entry of a snapshot recorded before uses existed gets its version's
// shipped uses; entries that have uses, and versions the catalog lacks, stay.
func TestFillUses(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	old := Release{Version: "1.5.0", Components: map[string]ComponentImage{
		"nessie":   {Name: "nessie"},
		"gateway":  {Name: "gateway", Uses: []string{}},
		"postgres": {Image: "postgres:16"},
	}}
	got := c.FillUses(old)
	if uses, err := got.Uses("nessie"); err != nil || strings.Join(uses, ",") != "postgres,minio" {
		t.Errorf("nessie uses = %v, %v; want the shipped postgres,minio", uses, err)
	}
	if uses := got.Components["gateway"].Uses; uses == nil || len(uses) != 0 {
		t.Errorf("gateway uses = %#v, want its own []", uses)
	}
	if got.Components["postgres"].Uses != nil {
		t.Error("infrastructure got uses")
	}
	if old.Components["nessie"].Uses != nil {
		t.Error("FillUses changed its argument's map")
	}
	unknown := Release{Version: "0.9.0", Components: map[string]ComponentImage{"nessie": {Name: "nessie"}}}
	if _, err := c.FillUses(unknown).Uses("nessie"); err == nil {
		t.Error("a version the catalog lacks got uses from somewhere")
	}
}
