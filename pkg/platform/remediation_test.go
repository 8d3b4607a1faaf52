/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// TestKeptRemediations: a remediation renders while its limit is above the spec's;
// once the spec's own limit is as high, it is dropped.
func TestKeptRemediations(t *testing.T) {
	lp, err := newLoader(t).LoadOne(filepath.Join("..", "..", "examples", "minimal.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	lp.Platform.Spec.Gateway.Resources = &v1alpha1.Resources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	lp.Remediations = []v1alpha1.Remediation{
		{Component: "gateway", Container: "gateway", Resource: "memory", From: "512Mi", To: "768Mi"},
		{Component: "nessie", Container: "nessie", Resource: "memory", From: "512Mi", To: "768Mi"}, // spec renders 1Gi
	}
	kept := lp.Kept()
	if len(kept) != 1 || kept[0].Component != "gateway" || kept[0].SpecLimit != "512Mi" || kept[0].SpecPath != "spec.gateway.resources.limits.memory" {
		t.Fatalf("Kept() = %+v, want gateway's only (spec 512Mi, at spec.gateway.resources.limits.memory)", kept)
	}
	limits := func() map[string]string {
		planes, err := lp.Render()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, obj := range render.Objects(planes) {
			if obj.GetKind() == "Deployment" {
				cs, _, _ := unstructuredContainers(obj.Object)
				out[obj.GetName()] = cs
			}
		}
		return out
	}
	if got := limits(); got["gateway"] != "768Mi" || got["nessie"] != "1Gi" {
		t.Errorf("rendered memory limits %v, want gateway 768Mi (raised), nessie 1Gi (spec above the remediation)", got)
	}
	lp.Platform.Spec.Gateway.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("768Mi")
	if kept := lp.Kept(); len(kept) != 0 {
		t.Errorf("Kept() = %+v with the spec as high as the remediation, want none", kept)
	}
	if got := limits(); got["gateway"] != "768Mi" {
		t.Errorf("gateway renders %s, want the spec's 768Mi", got["gateway"])
	}
}

func unstructuredContainers(obj map[string]any) (string, bool, error) {
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	lim, ok := c["resources"].(map[string]any)["limits"].(map[string]any)["memory"].(string)
	return lim, ok, nil
}
