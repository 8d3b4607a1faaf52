/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// TestServing checks the gate between planes: pods updated and ready is enough, even
// before minReadySeconds makes them Available, and nothing less is.
func TestServing(t *testing.T) {
	// notAvailable is w with every pod ready but none Available yet: minReadySeconds
	// has not passed since they turned ready.
	notAvailable := func(w *unstructured.Unstructured) *unstructured.Unstructured {
		_ = unstructured.SetNestedField(w.Object, int64(0), "status", "availableReplicas")
		if w.GetKind() == health.KindDeployment {
			_ = unstructured.SetNestedSlice(w.Object, []any{
				map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
				map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
			}, "status", "conditions")
		}
		return w
	}
	set := func(w *unstructured.Unstructured, value int64, fields ...string) *unstructured.Unstructured {
		_ = unstructured.SetNestedField(w.Object, value, fields...)
		return w
	}
	cases := []struct {
		name    string
		obj     *unstructured.Unstructured
		serving bool
	}{
		{"deployment rolled out and available", workload(health.KindDeployment, "api", 3, 3, ""), true},
		{"deployment ready, not yet available", notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), true},
		{"deployment with a pod not ready", notAvailable(workload(health.KindDeployment, "api", 3, 2, "")), false},
		{"deployment with an old pod left (surge)", set(notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), 4, "status", "replicas"), false},
		{"deployment with a pod of the old template", set(notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), 2, "status", "updatedReplicas"), false},
		{"deployment whose new spec is not observed", set(notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), 2, "metadata", "generation"), false},
		{"statefulset ready, not yet available", notAvailable(workload(health.KindStatefulSet, "postgres", 3, 3, "")), true},
		{"statefulset with a pod not ready", notAvailable(workload(health.KindStatefulSet, "postgres", 3, 2, "")), false},
		{"statefulset held by a partition", set(notAvailable(workload(health.KindStatefulSet, "postgres", 3, 3, "")), 2, "spec", "updateStrategy", "rollingUpdate", "partition"), health.Check(notAvailable(workload(health.KindStatefulSet, "postgres", 3, 3, ""))).Ready},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := health.Serving(c.obj); got.Ready != c.serving {
				t.Errorf("Serving = %+v, want ready %v", got, c.serving)
			}
		})
	}
	// The case the gate exists for: kstatus (Check) waits for Available, Serving not.
	if r := health.Check(notAvailable(workload(health.KindDeployment, "api", 3, 3, ""))); r.Ready {
		t.Errorf("Check of a Deployment not yet Available = ready (%s); the final wait would not wait for minReadySeconds", r.Message)
	}
}
