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

func TestPlanView(t *testing.T) {
	ref := func(kind, name string) plan.ObjectRef {
		return plan.ObjectRef{Version: "v1", Kind: kind, Namespace: "onto-system", Name: name}
	}
	changes := &plan.Plan{
		Platform: plan.ObjectRef{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: "onto-system", Name: "onto-production"},
		Version:  "1.6.0",
		Planes: []plan.PlanePlan{
			{Name: plan.PlatformPlane, Changes: []plan.Change{
				{Action: plan.ActionUnchanged, Object: plan.ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "ontoplatforms.onto.paas"}},
				{Action: plan.ActionUpdate, Object: plan.ObjectRef{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: "onto-system", Name: "onto-production"},
					Fields: []plan.FieldChange{{Path: "spec.version", Old: "1.5.0", New: "1.6.0"},
						{Path: "spec.gateway.autoscaling.enabled", Old: true}}},
			}},
			{Name: "tenancy", Changes: []plan.Change{
				{Action: plan.ActionUpdate, Object: plan.ObjectRef{Version: "v1", Kind: "Namespace", Name: "onto-system"},
					Fields: []plan.FieldChange{{Path: "metadata.labels[pod-security.kubernetes.io/enforce]", New: "restricted"}}},
			}},
			{Name: "infrastructure", Changes: []plan.Change{
				{Action: plan.ActionUnchanged, Object: ref("Service", "postgres")},
				{Action: plan.ActionUpdate, Object: ref("Secret", "minio"), Fields: []plan.FieldChange{{Path: "data.root-password", Old: plan.Masked, New: plan.Masked}}},
			}},
			{Name: "control", Changes: []plan.Change{
				{Action: plan.ActionCreate, Object: ref("ConfigMap", "ontology-service-config-abc")},
				{Action: plan.ActionUpdate, Object: ref("Deployment", "ontology-service"),
					Fields: []plan.FieldChange{{Path: "spec.replicas", Old: int64(2), New: int64(3)}, {Path: "spec.template.spec.containers[name=ontology-service].image", Old: "r/ontology-service:1.5.0", New: "r/ontology-service:1.6.0"},
						{Path: "spec.template.spec.containers[name=ontology-service].args", Old: []any{"--registry=registry.example.com/coomia-dip/long/path/of/the/platform", "--log-level=info"}, New: []any{"--registry=registry.example.com/coomia-dip/long/path/of/the/platform", "--log-level=debug"}}},
					Conflicts: []plan.Conflict{{Field: ".spec.replicas", Manager: "kubectl-scale"}}},
				{Action: plan.ActionDelete, Object: ref("ConfigMap", "ontology-service-config-old")},
			}},
			{Name: "data", Changes: []plan.Change{{Action: plan.ActionUnchanged, Object: ref("Service", "nessie")}}},
		},
		Summary: plan.Summary{Create: 1, Update: 4, Delete: 1, Unchanged: 3, Conflicts: 1},
		Warnings: []string{"namespace onto-system exists and its Pod Security labels change (enforce: (none) → restricted): " +
			"new pods of every workload in it, not only this platform's, are admitted by the new labels; spec.tenancy.podSecurity sets them (enforce, warn or none)"},
	}
	none := &plan.Plan{Platform: changes.Platform, Version: "1.6.0",
		Planes:  []plan.PlanePlan{{Name: "data", Changes: []plan.Change{{Action: plan.ActionUnchanged, Object: ref("Service", "nessie")}}}},
		Summary: plan.Summary{Unchanged: 1}}
	tests := []struct {
		name   string
		view   printers.PlanView
		format printers.Format
	}{
		{"changes.txt", printers.PlanView{Plan: changes}, printers.FormatText},
		{"changes-show-unchanged.txt", printers.PlanView{Plan: changes, ShowUnchanged: true}, printers.FormatText},
		{"no-changes.txt", printers.PlanView{Plan: none}, printers.FormatText},
		{"changes.json", printers.PlanView{Plan: changes}, printers.FormatJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.Write(&out, tc.format, printers.Plain(&out), tc.view); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestPlanView", tc.name+".golden"))
		})
	}
}
