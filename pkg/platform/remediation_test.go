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
	lp.Platform.Spec.Remediation.Memory.Enabled = true
	lp.Platform.Spec.Gateway.Resources = &v1alpha1.Resources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	lp.Remediations = []v1alpha1.Remediation{
		{Component: "gateway", Container: "gateway", Resource: "memory", From: "512Mi", To: "768Mi", SpecLimit: "512Mi"},
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

// TestKeptRemediationsYieldToTheFile: a remediation is dropped once the file sets
// another limit than the one raised from (lower here), or turns remediation off.
func TestKeptRemediationsYieldToTheFile(t *testing.T) {
	lp, err := newLoader(t).LoadOne(filepath.Join("..", "..", "examples", "minimal.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	lp.Platform.Spec.Remediation.Memory.Enabled = true
	lp.Platform.Spec.Gateway.Resources = &v1alpha1.Resources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	// Raised twice: From is the first raise, SpecLimit what the file said before both.
	lp.Remediations = []v1alpha1.Remediation{{Component: "gateway", Container: "gateway", Resource: "memory", From: "768Mi", To: "1152Mi", SpecLimit: "512Mi"}}
	if kept := lp.Kept(); len(kept) != 1 {
		t.Fatalf("Kept() = %+v with the file unchanged, want the gateway's raise", kept)
	}
	lp.Platform.Spec.Gateway.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("384Mi")
	if kept := lp.Kept(); len(kept) != 0 {
		t.Errorf("Kept() = %+v with a lower limit in the file, want none: the file wins", kept)
	}
	lp.Platform.Spec.Gateway.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("512Mi")
	lp.Platform.Spec.Remediation.Memory.Enabled = false
	if kept := lp.Kept(); len(kept) != 0 {
		t.Errorf("Kept() = %+v with remediation off, want none", kept)
	}
}

func unstructuredContainers(obj map[string]any) (string, bool, error) {
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	lim, ok := c["resources"].(map[string]any)["limits"].(map[string]any)["memory"].(string)
	return lim, ok, nil
}
