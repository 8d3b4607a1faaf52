/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"slices"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// TestIrreversibleMigrations: leaving a release whose migration is not backward
// compatible names it; staying on it, or a compatible migration, names nothing.
func TestIrreversibleMigrations(t *testing.T) {
	rel := release.Release{Version: "1.6.0", Components: map[string]release.ComponentImage{
		"data-service":     {Name: "data-service", Migration: &release.Migration{BackwardCompatible: false}},
		"ontology-service": {Name: "ontology-service", Migration: &release.Migration{BackwardCompatible: true}},
		"gateway":          {Name: "gateway"},
	}}
	if got := IrreversibleMigrations(rel, "1.5.0"); !slices.Equal(got, []string{"data-service (release 1.6.0)"}) {
		t.Fatalf("leaving 1.6.0: %v, want data-service", got)
	}
	if got := IrreversibleMigrations(rel, "1.6.0"); got != nil {
		t.Fatalf("staying on 1.6.0: %v, want none", got)
	}
}

// TestMigrationJobName: a Job name is a DNS label of the component and the version.
func TestMigrationJobName(t *testing.T) {
	if got := migrationJobName("data-service", "1.6.0"); got != "data-service-migrate-1-6-0" {
		t.Fatalf("migrationJobName = %q", got)
	}
}
