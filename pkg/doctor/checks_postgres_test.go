/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// withPostgres renders a postgres Service selecting selector, and the pods named, each
// ready unless changed by notReady.
func withPostgres(selector map[string]any, notReady func(p *corev1.Pod), pods ...string) func(e *Env) {
	return func(e *Env) {
		svc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": v1alpha1.ComponentPostgres, "namespace": testNamespace},
			"spec":     map[string]any{"selector": selector},
		}}
		e.Desired = &plan.Desired{Namespace: testNamespace, Version: "1.5.0",
			Planes: []render.Plane{{Name: v1alpha1.PlaneInfrastructure, Objects: []*unstructured.Unstructured{svc}}}}
		for _, name := range pods {
			p := testPod(name, v1alpha1.ComponentPostgres)
			if name == "postgres-0" && notReady != nil {
				notReady(&p)
			}
			e.Pods = append(e.Pods, p)
		}
	}
}

func TestPostgresPrimaryCheck(t *testing.T) {
	replicated := map[string]any{v1alpha1.LabelName: "postgres", podNameLabel: "postgres-0"}
	failedOver := map[string]any{v1alpha1.LabelName: "postgres", podNameLabel: "postgres-1"}
	single := map[string]any{v1alpha1.LabelName: "postgres"}
	unready := func(p *corev1.Pod) {
		p.Status.Conditions[0].Status = corev1.ConditionFalse
		p.Status.ContainerStatuses[0].Ready = false
	}
	crashing := func(p *corev1.Pod) {
		unready(p)
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = 4
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	}
	const evidence = "postgres primary postgres-0 is not ready; writes fail"
	runCases(t, []checkCase{
		{name: "no platform", code: CodePostgresPrimary, setup: noPlatform, skip: "no installed platform"},
		{name: "no desired state", code: CodePostgresPrimary, skip: "no desired state"},
		{name: "single postgres", code: CodePostgresPrimary, setup: withPostgres(single, unready, "postgres-0"), skip: "no standbys"},
		{name: "primary ready", code: CodePostgresPrimary, setup: withPostgres(replicated, nil, "postgres-0", "postgres-1")},
		{name: "primary not ready", code: CodePostgresPrimary, setup: withPostgres(replicated, unready, "postgres-0", "postgres-1"),
			want: []wantFinding{{severity: SeverityError, object: "pod/postgres-0",
				evidence: []string{evidence, "NotReady"}, fix: []string{"promote a standby", "/docs/postgres-failover.md"}}}},
		{name: "primary crash-looping", code: CodePostgresPrimary, setup: withPostgres(replicated, crashing, "postgres-0", "postgres-1"),
			want: []wantFinding{{severity: SeverityError, object: "pod/postgres-0", evidence: []string{evidence, "CrashLoopBackOff"}}}},
		{name: "primary gone", code: CodePostgresPrimary, setup: withPostgres(replicated, nil, "postgres-1", "postgres-2"),
			want: []wantFinding{{severity: SeverityError, object: "pod/postgres-0", evidence: []string{evidence, "does not exist"}}}},
		{name: "primary terminating", code: CodePostgresPrimary, setup: withPostgres(replicated, func(p *corev1.Pod) {
			p.DeletionTimestamp = ptrTime(ago(time.Second))
		}, "postgres-0"), want: []wantFinding{{severity: SeverityError, object: "pod/postgres-0", evidence: []string{"terminating"}}}},
		{name: "after a failover pod 0 re-seeding is a standby", code: CodePostgresPrimary, setup: withPostgres(failedOver, unready, "postgres-0", "postgres-1")},
		{name: "after a failover the promoted pod is down", code: CodePostgresPrimary, setup: withPostgres(failedOver, nil, "postgres-0"),
			want: []wantFinding{{severity: SeverityError, object: "pod/postgres-1", evidence: []string{"postgres primary postgres-1 is not ready"}}}},
	})
}
