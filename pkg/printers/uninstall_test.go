/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// TestUninstallPlanView: the dry run lists stages, the planes of one stage on one line
// marked together, and what is kept; -o json keeps each step with its stage.
func TestUninstallPlanView(t *testing.T) {
	ref := func(kind, name string) plan.ObjectRef {
		return plan.ObjectRef{Group: "apps", Version: "v1", Kind: kind, Namespace: "onto", Name: name}
	}
	p := &apply.UninstallPlan{
		Platform:    plan.ObjectRef{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: "onto", Name: "onto"},
		InventoryID: "onto-id",
		Steps: []apply.UninstallStep{
			{Plane: "gateway", Stage: 1, Objects: []plan.ObjectRef{ref("Deployment", "gateway")}},
			{Plane: "data", Stage: 1, Objects: []plan.ObjectRef{ref("Deployment", "data-service"), ref("Deployment", "nessie")}},
			{Plane: "infrastructure", Stage: 2, Objects: []plan.ObjectRef{ref("StatefulSet", "postgres")}},
			{Plane: "platform", Stage: 3, Objects: []plan.ObjectRef{{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: "onto", Name: "onto"}}},
		},
		Kept: []apply.KeptObject{{Object: plan.ObjectRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "onto", Name: "data-postgres-0"}, Reason: "volume data is kept unless --delete-data"}},
	}
	for _, tc := range []struct {
		name   string
		format printers.Format
	}{{"plan.txt", printers.FormatText}, {"plan.json", printers.FormatJSON}} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.Write(&out, tc.format, printers.Plain(&out), printers.UninstallPlanView{UninstallPlan: p, DryRun: apply.DryRunClient}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestUninstallPlanView", tc.name+".golden"))
		})
	}
}
