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

// TestServing checks the gate between planes: one Ready pod of the current spec per
// workload is enough, before the rollout ends and before minReadySeconds makes pods
// Available, and nothing less is.
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
		{"deployment with one new pod ready of three", notAvailable(workload(health.KindDeployment, "api", 3, 1, "")), true},
		{"deployment with no pod ready", notAvailable(workload(health.KindDeployment, "api", 3, 0, "")), false},
		// Mid-rollout, maxSurge 1: one new pod beside three old ones, all four
		// Ready, then the new one not yet.
		{"deployment whose new pod is ready", set(set(set(notAvailable(workload(health.KindDeployment, "api", 3, 4, "")), 4, "status", "replicas"), 1, "status", "updatedReplicas"), 4, "status", "readyReplicas"), true},
		{"deployment whose new pod is not ready yet", set(set(set(notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), 4, "status", "replicas"), 1, "status", "updatedReplicas"), 3, "status", "readyReplicas"), false},
		{"deployment with no pod of the new spec", set(notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), 0, "status", "updatedReplicas"), false},
		{"deployment whose new spec is not observed", set(notAvailable(workload(health.KindDeployment, "api", 3, 3, "")), 2, "metadata", "generation"), false},
		{"deployment scaled to zero", notAvailable(workload(health.KindDeployment, "api", 0, 0, "")), health.Check(notAvailable(workload(health.KindDeployment, "api", 0, 0, ""))).Ready},
		{"statefulset ready, not yet available", notAvailable(workload(health.KindStatefulSet, "postgres", 3, 3, "")), true},
		{"statefulset starting in order, pod 0 ready", notAvailable(set(set(workload(health.KindStatefulSet, "postgres", 3, 1, ""), 1, "status", "replicas"), 1, "status", "updatedReplicas")), true},
		{"statefulset with no pod ready", notAvailable(workload(health.KindStatefulSet, "postgres", 3, 0, "")), false},
		// One pod of three Ready would serve, but a partition is an upgrade's step:
		// kstatus's rule, not ready.
		{"statefulset held by a partition", set(notAvailable(workload(health.KindStatefulSet, "postgres", 3, 1, "")), 2, "spec", "updateStrategy", "rollingUpdate", "partition"), false},
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
