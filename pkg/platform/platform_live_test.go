/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestUpToDate: a fleet run only checks a platform that already runs the file: the
// same spec, Running at its generation, at the file's version, no upgrade.
func TestUpToDate(t *testing.T) {
	file := &v1alpha1.OntoPlatform{}
	file.Spec.Version = "1.6.0"
	running := func(change func(p *v1alpha1.OntoPlatform)) *v1alpha1.OntoPlatform {
		p := &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: *file.Spec.DeepCopy()}
		p.Status.Phase, p.Status.ObservedGeneration, p.Status.Version = v1alpha1.PhaseRunning, 3, "1.6.0"
		if change != nil {
			change(p)
		}
		return p
	}
	tests := []struct {
		name string
		live *v1alpha1.OntoPlatform
		want bool
	}{
		{name: "not installed", live: nil},
		{name: "running the file", live: running(nil), want: true},
		{name: "being deleted", live: running(func(p *v1alpha1.OntoPlatform) { p.DeletionTimestamp = &metav1.Time{} })},
		{name: "not Running", live: running(func(p *v1alpha1.OntoPlatform) { p.Status.Phase = v1alpha1.PhaseDegraded })},
		{name: "generation not observed", live: running(func(p *v1alpha1.OntoPlatform) { p.Generation = 4 })},
		{name: "another version", live: running(func(p *v1alpha1.OntoPlatform) { p.Status.Version = "1.5.0" })},
		{name: "an upgrade stopped", live: running(func(p *v1alpha1.OntoPlatform) { p.Status.Upgrade = &v1alpha1.UpgradeStatus{To: "1.6.0"} })},
		{name: "another spec", live: running(func(p *v1alpha1.OntoPlatform) { p.Spec.Version = "1.5.0" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Loaded{Platform: file}).UpToDate(tc.live); got != tc.want {
				t.Errorf("UpToDate = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestKeepRemediations: an apply keeps the limits the watch raised, saying where to
// copy each one, and says why the file takes one back.
func TestKeepRemediations(t *testing.T) {
	lp, err := newLoader(t).LoadOne(filepath.Join("..", "..", "examples", "minimal.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if notes := lp.KeepRemediations(nil); notes != nil || lp.Remediations != nil {
		t.Fatalf("not installed: notes %q, remediations %v; want none", notes, lp.Remediations)
	}
	lp.Platform.Spec.Remediation.Memory.Enabled = true
	lp.Platform.Spec.Gateway.Resources = &v1alpha1.Resources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	live := &v1alpha1.OntoPlatform{}
	live.Status.Remediations = []v1alpha1.Remediation{
		{Component: "gateway", Container: "gateway", Resource: "memory", From: "512Mi", To: "768Mi", SpecLimit: "512Mi"},
	}
	want := []string{"gateway's memory limit is 768Mi, raised by the watch after an OOM kill (spec says 512Mi): copy it into spec.gateway.resources.limits.memory"}
	if notes := lp.KeepRemediations(live); !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	lp.Platform.Spec.Remediation.Memory.Enabled = false
	want = []string{"gateway's memory limit goes back to the file's, not the 768Mi the watch raised it to: spec.remediation.memory.enabled is false"}
	if notes := lp.KeepRemediations(live); !slices.Equal(notes, want) {
		t.Errorf("remediation off: notes %q, want %q", notes, want)
	}
}
