/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// applyCRD writes this tree's CRD to the cluster before a platform using fields it
// adds is planned (a plan dry-runs the OntoPlatform against the served schema).
func applyCRD(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", "default")
	crd := ontotest.Desired(t, p).CRD
	ri, err := clients.Resource(crd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Apply(t.Context(), crd.GetName(), crd, metav1.ApplyOptions{FieldManager: "kubectl-onto", Force: true}); err != nil {
		t.Fatal(err)
	}
	// Served once the API server has the new schema: wait until a dry-run of the new field passes.
	if err := testcluster.Eventually(t.Context(), 20*time.Second, func(ctx context.Context) (bool, error) {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
		obj.SetNamespace("default")
		obj.SetName("crd-probe")
		_ = unstructured.SetNestedField(obj.Object, "1.6.0", "spec", "version")
		_ = unstructured.SetNestedField(obj.Object, true, "spec", "remediation", "memory", "enabled")
		pri, err := clients.Resource(obj)
		if err == nil {
			_, err = pri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("the CRD does not serve spec.remediation: %v", err)
	}
}

// TestRemediationMemory: with spec.remediation.memory on (factor 1.5, max 2Gi), a
// nessie pod OOM-killed at its limit gets, within 60 s, a Deployment whose limit is
// ×1.5, a status.remediations entry and a MemoryRaised Event; a second OOM kill, of the
// new pod within the cooldown, raises nothing.
func TestRemediationMemory(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	applyCRD(t, c)
	maxQ := resource.MustParse("2Gi")
	e := startWatchWith(t, c, func(s *v1alpha1.OntoPlatformSpec) {
		s.Remediation.Memory = v1alpha1.MemoryRemediationSpec{Enabled: true, Factor: "1.5", Max: &maxQ}
	}, nil)
	ctx, ns := t.Context(), e.p.Namespace

	dep, err := e.deployment(v1alpha1.ComponentNessie)
	if err != nil {
		t.Fatal(err)
	}
	from := dep.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
	// ×1.5, rounded up to whole MiB.
	want := *resource.NewQuantity((from.Value()*3/2+(1<<20)-1)/(1<<20)*(1<<20), resource.BinarySI)
	if want.Cmp(maxQ) > 0 {
		want = maxQ
	}
	t.Logf("nessie's rendered memory limit is %s; the raise should give %s", from.String(), want.String())

	pod := e.runningPod(v1alpha1.ComponentNessie)
	start := time.Now()
	if err := c.SetPodChaos(ctx, ns, pod.Name, testcluster.ChaosOOMKilled); err != nil {
		t.Fatal(err)
	}
	e.eventually("nessie's Deployment with the raised limit", 60*time.Second, func() (bool, error) {
		d, err := e.deployment(v1alpha1.ComponentNessie)
		if err != nil {
			return false, err
		}
		got := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		return got.Cmp(want) == 0, nil
	})
	t.Logf("nessie's Deployment has memory limit %s %s after the OOM kill was set on", want.String(), time.Since(start).Round(100*time.Millisecond))

	live := e.live()
	if len(live.Status.Remediations) != 1 {
		t.Fatalf("status.remediations = %+v, want one entry", live.Status.Remediations)
	}
	rm := live.Status.Remediations[0]
	if rm.Component != v1alpha1.ComponentNessie || rm.Container != v1alpha1.ComponentNessie || rm.Resource != "memory" ||
		rm.From != from.String() || rm.To != want.String() || rm.Pod != pod.Name || rm.Time.IsZero() {
		t.Errorf("status.remediations[0] = %+v, want nessie/nessie memory %s → %s, pod %s", rm, from.String(), want.String(), pod.Name)
	}
	evs, err := e.platformEvents(controller.EventMemoryRaised)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || !strings.Contains(evs[0].Note, from.String()+" → "+want.String()) || !strings.Contains(evs[0].Note, pod.Name) {
		t.Fatalf("want one MemoryRaised Event naming %s → %s and pod %s; got:%s", from.String(), want.String(), pod.Name, describeEvents(evs))
	}
	if n := strings.Count(e.audit.String(), `"action":"raise-memory"`); n != 1 {
		t.Errorf("%d raise-memory audit lines, want 1:\n%s", n, e.audit.String())
	}

	// The new pod, with the raised limit, OOM-killed within the cooldown (30 min).
	var next corev1.Pod
	e.eventually("a running nessie pod with the raised limit", 60*time.Second, func() (bool, error) {
		for _, p := range e.pods(v1alpha1.ComponentNessie) {
			lim := p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
			if p.Status.Phase == corev1.PodRunning && lim.Cmp(want) == 0 {
				next = p
				return true, nil
			}
		}
		return false, nil
	})
	second := time.Now()
	if err := c.SetPodChaos(ctx, ns, next.Name, testcluster.ChaosOOMKilled); err != nil {
		t.Fatal(err)
	}
	e.eventually("a RemediationBlocked Event naming the cooldown", 60*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventRemediationBlocked)
		for _, ev := range evs {
			if strings.Contains(ev.Note, next.Name) && strings.Contains(ev.Note, "cooldown") {
				return true, nil
			}
		}
		return false, err
	})
	t.Logf("RemediationBlocked (cooldown) Event %s after the second OOM kill was set on", time.Since(second).Round(100*time.Millisecond))
	e.staysTrue("after the second OOM kill, still one MemoryRaised Event and nessie's limit "+want.String(), 3*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventMemoryRaised)
		if err != nil {
			return false, err
		}
		if len(evs) != 1 {
			return false, fmt.Errorf("got:%s", describeEvents(evs))
		}
		d, err := e.deployment(v1alpha1.ComponentNessie)
		if err != nil {
			return false, err
		}
		if got := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.Cmp(want) != 0 {
			return false, fmt.Errorf("nessie's limit is %s", got.String())
		}
		return true, nil
	})
	if live := e.live(); len(live.Status.Remediations) != 1 || live.Status.Remediations[0].To != want.String() {
		t.Errorf("status.remediations = %+v after the second OOM kill, want the first raise only", live.Status.Remediations)
	}
}
