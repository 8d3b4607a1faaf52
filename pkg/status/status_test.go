/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// renderExample loads and renders an example platform, as apply would.
func renderExample(t *testing.T, name string) (*v1alpha1.OntoPlatform, []*unstructured.Unstructured) {
	t.Helper()
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := v.LoadFile("../../examples/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := catalog.Get(ps[0].Spec.Version)
	if err != nil {
		t.Fatal(err)
	}
	planes, err := render.Render(ps[0], render.Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, p := range planes {
		objs = append(objs, p.Objects...)
	}
	return ps[0], objs
}

// rolledOut is the live counterpart of a rendered workload once its controller has
// rolled it out: replicas is its spec's count (when nil, the rendered one, or
// autoscaledReplicas when the render leaves the count to an autoscaler), and all of
// them are ready.
func rolledOut(desired *unstructured.Unstructured, replicas *int64) *unstructured.Unstructured {
	live := desired.DeepCopy()
	live.SetGeneration(1)
	n, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
	switch {
	case replicas != nil:
		n = *replicas
	case !found:
		n = autoscaledReplicas
	}
	_ = unstructured.SetNestedField(live.Object, n, "spec", "replicas")
	status := map[string]any{
		"observedGeneration": int64(1),
		"replicas":           n, "updatedReplicas": n, "currentReplicas": n, "readyReplicas": n, "availableReplicas": n,
		"currentRevision": "r1", "updateRevision": "r1",
	}
	if live.GetKind() == health.KindDeployment {
		status["conditions"] = []any{
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			map[string]any{"type": "Available", "status": "True"},
		}
	}
	live.Object["status"] = status
	return live
}

// TestJoinAgreesWithApply: for the same live workloads, the components `status`
// reports (from the stored spec and the inventory) and those apply records (from the
// rendered workloads, health.ComponentStatuses) say the same thing, component by
// component, so the recorded Ready condition and the live count can only differ when
// the workloads changed in between.
func TestJoinAgreesWithApply(t *testing.T) {
	ptr := func(n int64) *int64 { return &n }
	tests := []struct {
		name    string
		example string
		// scale overrides the live replicas of a workload, by name.
		scale map[string]int64
		// missing workloads were deleted behind the tool's back.
		missing []string
		// version relabels a workload as running another version, by name.
		version   map[string]string
		wantReady bool
	}{
		{name: "minimal, all rolled out", example: "minimal.yaml", wantReady: true},
		{name: "production, all rolled out", example: "platform.yaml", wantReady: true},
		{name: "production, some scaled down, one deleted, one at another version", example: "platform.yaml",
			// ontology-service is autoscaled: 1 is below its HorizontalPodAutoscaler's floor.
			scale:   map[string]int64{"postgres": 0, "gateway": 1, "ontology-service": 1},
			missing: []string{"data-service"}, version: map[string]string{"redis": "1.4.0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, desired := renderExample(t, tc.example)
			gone := map[string]bool{}
			for _, m := range tc.missing {
				gone[m] = true
			}
			byDesired := map[*unstructured.Unstructured]*unstructured.Unstructured{}
			var live []*unstructured.Unstructured
			for _, d := range desired {
				if !health.IsWorkload(d) || gone[d.GetName()] {
					continue
				}
				var replicas *int64
				if n, ok := tc.scale[d.GetName()]; ok {
					replicas = ptr(n)
				}
				l := rolledOut(d, replicas)
				if v, ok := tc.version[d.GetName()]; ok {
					labels := l.GetLabels()
					labels["app.kubernetes.io/version"] = v
					l.SetLabels(labels)
				}
				byDesired[d] = l
				live = append(live, l)
			}
			for _, name := range append(slices.Collect(maps.Keys(tc.scale)), append(tc.missing, slices.Collect(maps.Keys(tc.version))...)...) {
				if !containsWorkload(desired, name) {
					t.Fatalf("%s renders no workload %s", tc.example, name)
				}
			}

			r := join(p, live).report
			applied := health.ComponentStatuses(desired, func(d *unstructured.Unstructured) *unstructured.Unstructured { return byDesired[d] })
			fromStatus := map[string]v1alpha1.ComponentStatus{}
			for _, c := range r.Components {
				fromStatus[c.Name] = v1alpha1.ComponentStatus{Name: c.Name, Kind: c.Kind, DesiredReplicas: c.DesiredReplicas,
					ReadyReplicas: c.ReadyReplicas, Version: c.Version, Ready: c.Ready, Message: c.Message}
			}
			fromApply := map[string]v1alpha1.ComponentStatus{}
			for _, c := range applied {
				c.Plane = "" // status falls back to the spec's plane, apply to the rendered label: the same, but not compared
				fromApply[c.Name] = c
			}
			if diff := cmp.Diff(fromApply, fromStatus); diff != "" {
				t.Errorf("apply's components (-) and status's (+) differ:\n%s", diff)
			}
			ready, total := health.CountReady(applied)
			if got := r.ReadyComponents; got != fmt.Sprintf("%d/%d", ready, total) {
				t.Errorf("status counts %s ready, apply %d/%d", got, ready, total)
			}
			if r.Ready != tc.wantReady {
				t.Errorf("Ready = %v, want %v (%s)", r.Ready, tc.wantReady, r.ReadyComponents)
			}
		})
	}
}

// autoscaledReplicas is what the autoscaler chose for every autoscaled workload in
// these tests: above the examples' floors (minReplicas 2).
const autoscaledReplicas = 4

func containsWorkload(objs []*unstructured.Unstructured, name string) bool {
	for _, w := range objs {
		if health.IsWorkload(w) && w.GetName() == name {
			return true
		}
	}
	return false
}

// TestJoinMarksRecordedConditions: the report says when the conditions were recorded
// and flags a recorded Ready the live workloads contradict.
func TestJoinMarksRecordedConditions(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(m int) metav1.Time { return metav1.NewTime(start.Add(time.Duration(m) * time.Minute)) }
	p, desired := renderExample(t, "minimal.yaml")
	var allReady, oneDown []*unstructured.Unstructured
	for _, d := range desired {
		if !health.IsWorkload(d) {
			continue
		}
		allReady = append(allReady, rolledOut(d, nil))
		if d.GetName() == "postgres" {
			zero := int64(0)
			oneDown = append(oneDown, rolledOut(d, &zero))
		} else {
			oneDown = append(oneDown, rolledOut(d, nil))
		}
	}
	tests := []struct {
		name       string
		conditions []metav1.Condition
		live       []*unstructured.Unstructured
		// wantDisagrees is LiveDisagrees of each condition, in report order.
		wantDisagrees []bool
		wantAt        *metav1.Time
	}{
		{name: "nothing recorded", live: allReady},
		{name: "recorded ready, live ready", live: allReady, wantDisagrees: []bool{false, false}, wantAt: ptrTime(at(5)),
			conditions: []metav1.Condition{
				{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: at(1)},
				{Type: v1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, LastTransitionTime: at(5)},
			}},
		{name: "recorded ready, one scaled down since", live: oneDown, wantDisagrees: []bool{true, false}, wantAt: ptrTime(at(5)),
			conditions: []metav1.Condition{
				{Type: v1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, LastTransitionTime: at(5)},
				{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: at(1)},
			}},
		{name: "recorded not ready, live ready", live: allReady, wantDisagrees: []bool{true, false}, wantAt: ptrTime(at(9)),
			conditions: []metav1.Condition{
				{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, LastTransitionTime: at(9)},
				{Type: v1alpha1.ConditionDegraded, Status: metav1.ConditionTrue, LastTransitionTime: at(2)},
			}},
		{name: "recorded unknown is not contradicted", live: oneDown, wantDisagrees: []bool{false}, wantAt: ptrTime(at(3)),
			conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, LastTransitionTime: at(3)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pp := p.DeepCopy()
			pp.Status.Conditions = tc.conditions
			r := join(pp, tc.live).report
			var got []bool
			for _, c := range r.Conditions {
				got = append(got, c.LiveDisagrees)
			}
			if diff := cmp.Diff(tc.wantDisagrees, got); diff != "" {
				t.Errorf("LiveDisagrees (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAt, r.ConditionsRecordedAt); diff != "" {
				t.Errorf("ConditionsRecordedAt (-want +got):\n%s", diff)
			}
		})
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
