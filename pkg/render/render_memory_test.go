/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestMemoryLimitOverride: Options.MemoryLimits sets the memory limit of the named
// components' main container, Deployment and StatefulSet alike; requests, other
// limits and other components stay as the spec renders them.
func TestMemoryLimitOverride(t *testing.T) {
	p, rel := production(t)
	plain, err := Render(p, Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	over, err := Render(p, Options{Release: rel, MemoryLimits: map[string]resource.Quantity{
		v1alpha1.ComponentNessie: resource.MustParse("1536Mi"), v1alpha1.ComponentPostgres: resource.MustParse("6Gi"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	before, after := podTemplates(t, Objects(plain)), podTemplates(t, Objects(over))
	for key, want := range map[string]string{"Deployment/nessie": "1536Mi", "StatefulSet/postgres": "6Gi"} {
		b, a := before[key].Spec.Containers[0].Resources, after[key].Spec.Containers[0].Resources
		if got := a.Limits[corev1.ResourceMemory]; got.String() != want {
			t.Errorf("%s: memory limit %s, want %s", key, got.String(), want)
		}
		if !equalList(a.Requests, b.Requests) || !a.Limits.Cpu().Equal(*b.Limits.Cpu()) {
			t.Errorf("%s: requests or cpu limit changed: %v → %v", key, b, a)
		}
	}
	for key, tpl := range after {
		if key == "Deployment/nessie" || key == "StatefulSet/postgres" {
			continue
		}
		b := before[key].Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		if a := tpl.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; !a.Equal(b) {
			t.Errorf("%s: memory limit %s, want %s as without overrides", key, a.String(), b.String())
		}
	}
}

func equalList(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func TestMemoryLimitOfSpec(t *testing.T) {
	p, _ := production(t)
	p.Spec.DataPlane.Nessie.Resources = &v1alpha1.Resources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	p.Spec.Gateway.Resources = nil
	for comp, want := range map[string]string{v1alpha1.ComponentNessie: "512Mi", v1alpha1.ComponentGateway: "1Gi", v1alpha1.ComponentRedisSentinel: "128Mi"} {
		if got, ok := MemoryLimit(p, comp); !ok || got.String() != want {
			t.Errorf("MemoryLimit(%s) = %s, %v; want %s", comp, got.String(), ok, want)
		}
	}
	if _, ok := MemoryLimit(p, "nope"); ok {
		t.Error("MemoryLimit of an unknown component is found")
	}
}
