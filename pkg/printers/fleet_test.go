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
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

func TestFleetView(t *testing.T) {
	platformRef := func(ns string) plan.ObjectRef {
		return plan.ObjectRef{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: ns, Name: ns}
	}
	unchanged := &plan.Plan{Platform: platformRef("tenant-a"), Version: "1.6.0",
		Planes:  []plan.PlanePlan{{Name: "data", Changes: []plan.Change{{Action: plan.ActionUnchanged, Object: plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "tenant-a", Name: "nessie"}}}}},
		Summary: plan.Summary{Unchanged: 1}}
	created := &plan.Plan{Platform: platformRef("tenant-b"), Version: "1.6.0",
		Planes:  []plan.PlanePlan{{Name: "data", Changes: []plan.Change{{Action: plan.ActionCreate, Object: plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "tenant-b", Name: "nessie"}}}}},
		Summary: plan.Summary{Create: 1}}
	plans := printers.FleetView{Platforms: []printers.FleetPlatform{
		{Namespace: "tenant-a", Name: "tenant-a", Result: "succeeded", Changes: 0, DurationSeconds: 0.84, Plan: unchanged},
		{Namespace: "tenant-b", Name: "tenant-b", Result: "succeeded", Changes: 1, DurationSeconds: 1.25, Plan: created},
		{Namespace: "tenant-c", Name: "tenant-c", Result: "failed", DurationSeconds: 0.31, Error: "get namespace tenant-c: forbidden\nsecond line"},
	}}
	applies := printers.FleetView{Platforms: []printers.FleetPlatform{
		{Namespace: "tenant-a", Name: "tenant-a", Result: "succeeded", Changes: 23, DurationSeconds: 64.56,
			Status: &printers.FleetStatus{Phase: "Ready", Version: "1.6.0", ReadyComponents: "5/5"}},
		{Namespace: "tenant-b", Name: "tenant-b", Result: "failed", Changes: 4, DurationSeconds: 12,
			Status: &printers.FleetStatus{Phase: "Failed", Version: "1.6.0", ReadyComponents: "2/5"}, Error: "plane infrastructure: exceeded quota"},
		{Namespace: "tenant-c", Name: "tenant-c", Result: "cancelled", Error: "cancelled: another platform failed (--fail-fast)"},
	}}
	tests := []struct {
		name   string
		view   printers.FleetView
		format printers.Format
	}{
		{"plans.txt", plans, printers.FormatText},
		{"plans.json", plans, printers.FormatJSON},
		{"applies.txt", applies, printers.FormatText},
		{"applies.json", applies, printers.FormatJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.Write(&out, tc.format, printers.Plain(&out), tc.view); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestFleetView", tc.name+".golden"))
		})
	}
}
