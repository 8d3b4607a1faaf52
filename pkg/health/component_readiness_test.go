/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// workload is a Deployment or StatefulSet named name running replicas, of which ready
// are ready, labelled as the renderer labels it. With ready == replicas it is rolled
// out by kstatus's rules; version "" leaves the version label out.
func workload(kind, name string, replicas, ready int64, version string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       kind,
		"metadata": map[string]any{
			"name": name, "namespace": "onto", "generation": int64(1),
			"labels": map[string]any{"app.kubernetes.io/name": name, "onto.paas/plane": "control"},
		},
		"spec": map[string]any{"replicas": replicas},
		"status": map[string]any{
			"observedGeneration": int64(1),
			"replicas":           replicas, "updatedReplicas": replicas, "currentReplicas": replicas,
			"readyReplicas": ready, "availableReplicas": ready,
			"currentRevision": "r1", "updateRevision": "r1",
		},
	}}
	if kind == health.KindDeployment {
		available := "True"
		if ready < replicas {
			available = "False"
		}
		_ = unstructured.SetNestedSlice(u.Object, []any{
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			map[string]any{"type": "Available", "status": available},
		}, "status", "conditions")
	}
	if version != "" {
		labels := u.GetLabels()
		labels["app.kubernetes.io/version"] = version
		u.SetLabels(labels)
	}
	return u
}

// rendered is a workload as the renderer writes it: no status; replicas nil leaves
// them out, as for an autoscaled service.
func rendered(kind, name string, replicas *int64, version string) *unstructured.Unstructured {
	u := workload(kind, name, 0, 0, version)
	delete(u.Object, "status")
	if replicas == nil {
		unstructured.RemoveNestedField(u.Object, "spec", "replicas")
	} else {
		_ = unstructured.SetNestedField(u.Object, *replicas, "spec", "replicas")
	}
	return u
}

func TestExpectationCheck(t *testing.T) {
	fixed := func(n int32) health.Expectation { return health.Expectation{Replicas: ptr.To(n), Version: "1.6.0"} }
	tests := []struct {
		name     string
		live     *unstructured.Unstructured
		expect   health.Expectation
		want     health.Ready
		wantRepl int32
	}{
		{name: "ready", live: workload("Deployment", "api", 2, 2, "1.6.0"), expect: fixed(2), want: health.Ready{Ready: true}, wantRepl: 2},
		{name: "scaled below the spec", live: workload("Deployment", "api", 1, 1, "1.6.0"), expect: fixed(2),
			want: health.Ready{Message: "scaled to 1 replicas, the spec asks for 2"}, wantRepl: 2},
		{name: "scaled above the spec is fine", live: workload("Deployment", "api", 3, 3, "1.6.0"), expect: fixed(2), want: health.Ready{Ready: true}, wantRepl: 2},
		{name: "another version", live: workload("Deployment", "api", 2, 2, "1.5.0"), expect: fixed(2),
			want: health.Ready{Message: "runs version 1.5.0, the spec asks for 1.6.0"}, wantRepl: 2},
		{name: "no version label is not a mismatch", live: workload("Deployment", "api", 2, 2, ""), expect: fixed(2), want: health.Ready{Ready: true}, wantRepl: 2},
		{name: "not rolled out: kstatus says why", live: workload("StatefulSet", "db", 3, 1, "1.6.0"), expect: fixed(3),
			want: health.Ready{Message: "Ready: 1/3"}, wantRepl: 3},
		{name: "autoscaled: the live count", live: workload("Deployment", "api", 4, 4, "1.6.0"), expect: health.Expectation{MinReplicas: 2}, want: health.Ready{Ready: true}, wantRepl: 4},
		{name: "autoscaled below its floor", live: workload("Deployment", "api", 1, 1, "1.6.0"), expect: health.Expectation{MinReplicas: 2},
			want: health.Ready{Message: "scaled to 1 replicas, the spec asks for 2"}, wantRepl: 2},
		{name: "not in the spec: its own count", live: workload("StatefulSet", "redis-sentinel", 1, 1, "1.6.0"), expect: health.Expectation{Version: "1.6.0"}, want: health.Ready{Ready: true}, wantRepl: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.expect.Check(tc.live)
			if got.Ready != tc.want.Ready || (tc.want.Message != "" && got.Message != tc.want.Message) {
				t.Errorf("Check = %+v, want %+v", got, tc.want)
			}
			if n := tc.expect.Want(tc.live); n != tc.wantRepl {
				t.Errorf("Want = %d, want %d", n, tc.wantRepl)
			}
		})
	}
}

func TestExpectComponent(t *testing.T) {
	tests := []struct {
		name string
		c    v1alpha1.Component
		want health.Expectation
	}{
		{name: "stateful, replicas unset",
			c:    v1alpha1.Component{Name: "postgres", Plane: v1alpha1.PlaneInfrastructure, Stateful: &v1alpha1.StatefulComponentSpec{}},
			want: health.Expectation{Replicas: ptr.To[int32](1), Version: "1.6.0", Plane: "infrastructure"}},
		{name: "service with replicas",
			c:    v1alpha1.Component{Name: "gateway", Plane: v1alpha1.PlaneGateway, Service: &v1alpha1.ServiceSpec{Replicas: ptr.To[int32](3)}},
			want: health.Expectation{Replicas: ptr.To[int32](3), Version: "1.6.0", Plane: "gateway"}},
		{name: "autoscaled service: the HPA chooses, above its floor",
			c:    v1alpha1.Component{Name: "api", Plane: v1alpha1.PlaneControl, Service: &v1alpha1.ServiceSpec{Autoscaling: &v1alpha1.AutoscalingSpec{Enabled: true, MinReplicas: 2, MaxReplicas: 5}}},
			want: health.Expectation{MinReplicas: 2, Version: "1.6.0", Plane: "control"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, health.ExpectComponent(tc.c, "1.6.0")); diff != "" {
				t.Errorf("ExpectComponent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComponentStatuses: what apply records from the rendered workloads, judged by
// the same rules as status, with an autoscaler's floor taken from the rendered HPA.
func TestComponentStatuses(t *testing.T) {
	hpa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": "api", "namespace": "onto"},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
			"minReplicas":    int64(2), "maxReplicas": int64(5),
		},
	}}
	configMap := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "api-config"}}}
	// search renders the 3 replicas it starts with, for its creation only: the HPA
	// (floor 2) has scaled it down since, and it is ready at 2.
	search := rendered("Deployment", "search", ptr.To[int64](3), "1.6.0")
	search.SetAnnotations(map[string]string{v1alpha1.AnnotationReplicas: v1alpha1.ReplicasCreateOnly})
	searchHPA := hpa.DeepCopy()
	searchHPA.SetName("search")
	_ = unstructured.SetNestedField(searchHPA.Object, "search", "spec", "scaleTargetRef", "name")
	desired := []*unstructured.Unstructured{
		configMap,
		rendered("StatefulSet", "postgres", ptr.To[int64](1), "1.6.0"),
		rendered("Deployment", "api", nil, "1.6.0"),
		hpa,
		rendered("Deployment", "gateway", ptr.To[int64](2), "1.6.0"),
		rendered("Deployment", "ui", ptr.To[int64](1), "1.6.0"),
		search,
		searchHPA,
	}
	live := map[string]*unstructured.Unstructured{
		"postgres": workload("StatefulSet", "postgres", 1, 1, "1.6.0"),
		"api":      workload("Deployment", "api", 1, 1, "1.6.0"), // scaled below the HPA's floor
		"gateway":  workload("Deployment", "gateway", 2, 1, "1.6.0"),
		"search":   workload("Deployment", "search", 2, 2, "1.6.0"),
	}
	got := health.ComponentStatuses(desired, func(d *unstructured.Unstructured) *unstructured.Unstructured { return live[d.GetName()] })
	want := []v1alpha1.ComponentStatus{
		{Name: "postgres", Plane: "control", Kind: "StatefulSet", DesiredReplicas: 1, ReadyReplicas: 1, Version: "1.6.0", Ready: true},
		{Name: "api", Plane: "control", Kind: "Deployment", DesiredReplicas: 2, ReadyReplicas: 1, Version: "1.6.0", Message: "scaled to 1 replicas, the spec asks for 2"},
		{Name: "gateway", Plane: "control", Kind: "Deployment", DesiredReplicas: 2, ReadyReplicas: 1, Version: "1.6.0", Message: got[2].Message},
		{Name: "ui", Plane: "control", Kind: "Deployment", DesiredReplicas: 1, Message: health.MessageNotInstalled},
		{Name: "search", Plane: "control", Kind: "Deployment", DesiredReplicas: 2, ReadyReplicas: 2, Version: "1.6.0", Ready: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ComponentStatuses (-want +got):\n%s", diff)
	}
	if got[2].Message == "" {
		t.Error("a Deployment with 1/2 ready replicas has no message")
	}
	if ready, total := health.CountReady(got); ready != 2 || total != 5 {
		t.Errorf("CountReady = %d/%d, want 2/5", ready, total)
	}
}
