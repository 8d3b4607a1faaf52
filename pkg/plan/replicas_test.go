/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestReplicasToApply: an autoscaled Deployment's rendered count (annotated create-only)
// is never applied over an existing Deployment; the hand-over to the autoscaler still
// applies the live count while this field manager owns it; other workloads keep their
// rendered count.
func TestReplicasToApply(t *testing.T) {
	deployment := func(replicas int64, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1",
			"kind":       "Deployment",
			"metadata":   map[string]any{"name": "gateway", "namespace": "onto"},
			"spec":       map[string]any{},
		}}
		if replicas >= 0 {
			_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
		}
		u.SetAnnotations(annotations)
		return u
	}
	createOnly := map[string]string{v1alpha1.AnnotationReplicas: v1alpha1.ReplicasCreateOnly}
	// live is an existing Deployment at replicas, whose spec.replicas manager owns.
	live := func(replicas int64, manager string, op metav1.ManagedFieldsOperationType) *unstructured.Unstructured {
		u := deployment(replicas, nil)
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{
			Manager:   manager,
			Operation: op,
			FieldsV1:  metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`),
		}})
		return u
	}
	tests := []struct {
		name         string
		obj, live    *unstructured.Unstructured
		wantReplicas int64 // -1: none applied
		wantSame     bool  // obj itself is returned
	}{
		{
			name: "create-only, the autoscaler owns the count: none applied",
			obj:  deployment(3, createOnly), live: live(7, "kube-controller-manager", metav1.ManagedFieldsOperationUpdate),
			wantReplicas: -1,
		},
		{
			name: "create-only, still ours since the create: the live count, not the rendered one",
			obj:  deployment(3, createOnly), live: live(5, FieldManager, metav1.ManagedFieldsOperationApply),
			wantReplicas: 5,
		},
		{
			name: "autoscaling just turned on over our count: handed over at the live count",
			obj:  deployment(2, createOnly), live: live(4, FieldManager, metav1.ManagedFieldsOperationApply),
			wantReplicas: 4,
		},
		{
			name: "fixed count: applied as rendered",
			obj:  deployment(3, nil), live: live(7, FieldManager, metav1.ManagedFieldsOperationApply),
			wantReplicas: 3, wantSame: true,
		},
		{
			name: "another annotation value: applied as rendered",
			obj:  deployment(3, map[string]string{v1alpha1.AnnotationReplicas: "always"}), live: live(7, "kube-controller-manager", metav1.ManagedFieldsOperationUpdate),
			wantReplicas: 3, wantSame: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.obj.DeepCopy()
			got := (&Planner{}).replicasToApply(tc.obj, tc.live)
			n, found, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
			switch {
			case tc.wantReplicas < 0 && found:
				t.Errorf("spec.replicas %d applied, want none", n)
			case tc.wantReplicas >= 0 && (!found || n != tc.wantReplicas):
				t.Errorf("spec.replicas %d (set %v), want %d", n, found, tc.wantReplicas)
			}
			if (got == tc.obj) != tc.wantSame {
				t.Errorf("returned obj itself: %v, want %v", got == tc.obj, tc.wantSame)
			}
			if !equalObjects(before, tc.obj) {
				t.Error("the rendered object was changed in place")
			}
		})
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}
