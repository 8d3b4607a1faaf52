/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// TestUninstallStages: the steps PlanUninstall adds, in its order, fall into stages:
// objects of no plane and the service planes together, then infrastructure, tenancy,
// the data, the OntoPlatform and the namespace each alone. A service plane after
// infrastructure (no such plan today) would start a stage of its own, not rejoin one.
func TestUninstallStages(t *testing.T) {
	obj := func(kind, name string) []*unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind(kind)
		o.SetNamespace("ns")
		o.SetName(name)
		return []*unstructured.Unstructured{o}
	}
	tests := []struct {
		name  string
		steps []string
		want  string
	}{
		{
			name:  "every step",
			steps: []string{UnlabelledPlane, "observability", "gateway", "intelligence", "data", "control", "infrastructure", "tenancy", DataStep, plan.PlatformPlane, namespaceStep},
			want:  "[[unlabelled observability gateway intelligence data control] [infrastructure] [tenancy] [persistent-data] [platform] [namespace]]",
		},
		{
			name:  "no service plane",
			steps: []string{"infrastructure", "tenancy", plan.PlatformPlane},
			want:  "[[infrastructure] [tenancy] [platform]]",
		},
		{
			name:  "a service plane after infrastructure",
			steps: []string{"gateway", "infrastructure", "data", "control"},
			want:  "[[gateway] [infrastructure] [data control]]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &UninstallPlan{live: map[plan.ObjectRef]*unstructured.Unstructured{}}
			for i, step := range tc.steps {
				p.addStep(step, obj("ConfigMap", fmt.Sprint("c", i)), servicePlane(step))
			}
			got := p.StagePlanes()
			if fmt.Sprint(got) != tc.want {
				t.Errorf("stages %v, want %s", got, tc.want)
			}
			for i, s := range p.Steps {
				if i > 0 && s.Stage != p.Steps[i-1].Stage && s.Stage != p.Steps[i-1].Stage+1 {
					t.Errorf("step %s: stage %d after %d, want consecutive numbers", s.Plane, s.Stage, p.Steps[i-1].Stage)
				}
			}
		})
	}
}
