/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// TestKafkaControllerChangeRefused: on an installed platform with one
// combined Kafka node, the API server refuses an update of the stored OntoPlatform to
// kafka.replicas 3 (dedicated controllers: another voter list) naming the field, as
// the offline rule does; 1 → 2 brokers is accepted. The cluster id is generated once,
// in the form Kafka formats its storage with, and a second apply keeps it.
func TestKafkaControllerChangeRefused(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t, v1alpha1.ComponentKafka)
	e.mustApply()
	ctx, ns := t.Context(), e.platform.Namespace

	secrets := e.cluster.Kube.CoreV1().Secrets(ns)
	secret, err := secrets.Get(ctx, v1alpha1.ComponentKafka, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("generated Secret kafka: %v", err)
	}
	id := string(secret.Data["cluster-id"])
	if raw, err := base64.RawURLEncoding.DecodeString(id); len(id) != 22 || err != nil || len(raw) != 16 {
		t.Fatalf("cluster id of %d characters (%v): not a Kafka cluster id", len(id), err)
	}

	platforms := e.cluster.Dynamic.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms")).Namespace(ns)
	update := func(replicas int32, dryRun bool) error {
		opts := metav1.PatchOptions{FieldManager: "test"}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		patch := []byte(`{"spec":{"infrastructure":{"kafka":{"replicas":` + strconv.Itoa(int(replicas)) + `}}}}`)
		_, err := platforms.Patch(ctx, e.platform.Name, types.MergePatchType, patch, opts)
		return err
	}
	err = update(3, false)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.infrastructure.kafka.replicas") || !strings.Contains(err.Error(), "kafka.replicas cannot cross 3") {
		t.Fatalf("update to kafka.replicas 3 = %v; want Invalid at spec.infrastructure.kafka.replicas with the quorum message", err)
	}
	if err := update(2, true); err != nil {
		t.Fatalf("update to kafka.replicas 2 (a second broker, same voter): %v", err)
	}

	// Offline, the same refusal, before any request would write.
	live := e.getPlatform()
	edited := live.DeepCopy()
	edited.Spec.Infrastructure.Kafka.Replicas = ptr.To[int32](3)
	errs := spec.CheckTransition(&live.Spec, &edited.Spec)
	if len(errs) != 1 || errs[0].Field != "spec.infrastructure.kafka.replicas" || !strings.HasPrefix(errs[0].Detail, "kafka.replicas cannot cross 3") {
		t.Fatalf("offline check: %v; want the same field refused", errs)
	}

	e.mustApply()
	again, err := secrets.Get(ctx, v1alpha1.ComponentKafka, metav1.GetOptions{})
	if err != nil || string(again.Data["cluster-id"]) != id {
		t.Fatalf("Secret kafka after a second apply: %v; the cluster id changed", err)
	}
}

// TestKafkaOfAnEarlierBuildRefused: a kafka StatefulSet without the data layout this
// build renders (an install from before the fixed quorum and generated cluster id) is
// refused by the plan and by apply, naming the StatefulSet, with nothing written; once
// the layout matches, apply goes on.
func TestKafkaOfAnEarlierBuildRefused(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t, v1alpha1.ComponentKafka)
	e.mustApply()
	ctx, ns := t.Context(), e.platform.Namespace
	sts := e.cluster.Kube.AppsV1().StatefulSets(ns)
	setLayout := func(v any) {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{v1alpha1.AnnotationDataLayout: v}}})
		if _, err := sts.Patch(ctx, v1alpha1.ComponentKafka, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "earlier-build"}); err != nil {
			t.Fatal(err)
		}
	}
	setLayout(nil)

	_, err := (&plan.Planner{Clients: e.clients}).Plan(ctx, e.desired())
	var layoutErr *plan.DataLayoutError
	if !errors.As(err, &layoutErr) || layoutErr.Object.Kind != "StatefulSet" || layoutErr.Object.Name != v1alpha1.ComponentKafka {
		t.Fatalf("plan = %v; want a DataLayoutError of StatefulSet kafka", err)
	}
	e.writes.Store(0)
	if _, err := e.apply(testOptions()); !errors.As(err, &layoutErr) || !strings.Contains(err.Error(), "delete statefulset kafka") {
		t.Fatalf("apply = %v; want the refusal naming StatefulSet kafka and how to proceed", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("the refused apply wrote %d times", n)
	}

	setLayout(e.desiredLayout())
	e.mustApply()
}

// desiredLayout is the data layout the rendered kafka StatefulSet carries.
func (e *env) desiredLayout() string {
	for _, obj := range e.desired().Objects() {
		if obj.GetKind() == "StatefulSet" && obj.GetName() == v1alpha1.ComponentKafka {
			return obj.GetAnnotations()[v1alpha1.AnnotationDataLayout]
		}
	}
	e.t.Fatal("no kafka StatefulSet rendered")
	return ""
}
