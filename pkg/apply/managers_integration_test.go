/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// TestOtherFieldManagers: four other writers change what the
// platform applied, each its own way: a scale through the scale subresource, an image
// change by `kubectl set image`, a server-side apply by another tool, and an autoscaler
// made by hand for a component of fixed size. The plan lists each conflict with its
// manager; apply refuses with no write; once the autoscaler is gone, --force-conflicts
// takes every field back and the platform converges.
func TestOtherFieldManagers(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	ctx, ns := t.Context(), e.platform.Namespace
	deployments := e.cluster.Kube.AppsV1().Deployments(ns)

	// `kubectl scale`: an update of the scale subresource.
	scale, err := deployments.GetScale(ctx, "gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 2
	if _, err := deployments.UpdateScale(ctx, "gateway", scale, metav1.UpdateOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}
	// `kubectl set image`: a strategic merge patch of one container's image.
	ds, err := deployments.Get(ctx, "data-service", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	image := `{"spec":{"template":{"spec":{"containers":[{"name":"` + ds.Spec.Template.Spec.Containers[0].Name + `","image":"registry.example/data-service:hotfix"}]}}}}`
	if _, err := deployments.Patch(ctx, "data-service", types.StrategicMergePatchType, []byte(image), metav1.PatchOptions{FieldManager: "kubectl-set"}); err != nil {
		t.Fatal(err)
	}
	// Another tool's server-side apply, forced over a field the platform set.
	other := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ontology-service","namespace":"` + ns + `"},"spec":{"revisionHistoryLimit":2}}`
	if _, err := deployments.Patch(ctx, "ontology-service", types.ApplyPatchType, []byte(other), metav1.PatchOptions{FieldManager: "other-tool", Force: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	// An autoscaler made by hand for nessie, which the spec runs at a fixed size; the
	// HPA controller scales it to 2.
	hpas := e.cluster.Kube.AutoscalingV2().HorizontalPodAutoscalers(ns)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "nessie-by-hand"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nessie"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 2,
		},
	}
	if _, err := hpas.Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := deployments.Get(ctx, "nessie", metav1.GetOptions{})
		return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 2, err
	})
	if err != nil {
		t.Fatalf("the autoscaler made by hand did not scale nessie to 2: %v", err)
	}

	p := e.plan(e.desired())
	want := map[string]string{ // object → field in conflict
		"gateway":          ".spec.replicas",
		"data-service":     ".spec.template.spec.containers[name=",
		"ontology-service": ".spec.revisionHistoryLimit",
		"nessie":           ".spec.replicas",
	}
	managers := map[string]string{}
	for _, c := range changesOf(p, plan.ActionUpdate) {
		field, ok := want[c.Object.Name]
		if !ok || c.Object.Kind != "Deployment" {
			continue
		}
		for _, cf := range c.Conflicts {
			if cf.Kind == plan.ConflictFieldManager && strings.HasPrefix(cf.Field, field) {
				managers[c.Object.Name] = cf.Manager
				t.Logf("plan: Deployment %s: %s owned by %s", c.Object.Name, cf.Field, cf.Manager)
			}
		}
	}
	for name, manager := range map[string]string{"gateway": "kubectl-scale", "data-service": "kubectl-set", "ontology-service": "other-tool", "nessie": ""} {
		got, ok := managers[name]
		switch {
		case !ok:
			t.Errorf("plan lists no conflict on Deployment %s's %s", name, want[name])
		case manager != "" && got != manager:
			t.Errorf("Deployment %s's conflict names manager %q, want %q", name, got, manager)
		case got == plan.FieldManager || got == "":
			t.Errorf("Deployment %s's conflict names manager %q, want the autoscaler's", name, got)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	e.writes.Store(0)
	_, err = e.apply(testOptions())
	var ce *apply.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("apply = %v, want a ConflictError with the way out", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a refused apply sent %d writes, want 0", n)
	}

	// The autoscaler would scale nessie again after any take-over: it goes first.
	if err := hpas.Delete(ctx, hpa.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.ForceConflicts = true
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply --force-conflicts: %v", err)
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after apply --force-conflicts has changes: %+v", p.Summary)
	}
	for name, check := range map[string]func(d *appsv1.Deployment) bool{
		"gateway": func(d *appsv1.Deployment) bool { return *d.Spec.Replicas == 1 },
		"nessie":  func(d *appsv1.Deployment) bool { return *d.Spec.Replicas == 1 },
		"data-service": func(d *appsv1.Deployment) bool {
			return d.Spec.Template.Spec.Containers[0].Image == ds.Spec.Template.Spec.Containers[0].Image
		},
		"ontology-service": func(d *appsv1.Deployment) bool { return *d.Spec.RevisionHistoryLimit == 5 },
	} {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil || !check(d) {
			t.Errorf("Deployment %s after apply --force-conflicts: %v, not taken back", name, err)
		}
	}
}
