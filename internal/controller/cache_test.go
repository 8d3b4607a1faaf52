/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// TestCacheOptionsOneEntryPerKind: the cache takes one entry per kind, and which of two
// entries of a kind it uses changes from run to run. Every kind the watch caches has
// one, with the transform the kind needs.
func TestCacheOptionsOneEntryPerKind(t *testing.T) {
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cacheOptions(ownedKinds(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[schema.GroupVersionKind]int{}
	for obj, by := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			t.Fatal(err)
		}
		seen[gvk]++
		if gvk.Kind != "Node" && (by.Label == nil || by.Label.Empty()) {
			t.Errorf("%s: cached without a label selector", gvk.Kind)
		}
	}
	for gvk, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d cache entries, want 1", gvk, n)
		}
	}
	if want := len(ownedKinds()) + 2; len(seen) != want { // and Pod, Node
		t.Errorf("%d kinds cached, want %d", len(seen), want)
	}
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*corev1.Secret); ok && by.Transform == nil {
			t.Error("Secrets are cached without the transform that drops their values")
		}
	}
}

// TestCacheTransformsKeepWhatPassesRead: each transform drops what no pass reads and
// keeps what one does (a Secret's keys, a workload's replicas and status, a pod's
// node, memory limits and status).
func TestCacheTransformsKeepWhatPassesRead(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl-onto"}}
	limit := resource.MustParse("512Mi")
	container := corev1.Container{Name: "app", Image: "app:1", Env: []corev1.EnvVar{{Name: "A", Value: "b"}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: limit, corev1.ResourceCPU: resource.MustParse("1")}}}
	replicas := int32(3)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ManagedFields: managed}, Data: map[string][]byte{"password": []byte("s3cret")}}
	if _, err := cacheTransform(secret)(secret); err != nil {
		t.Fatal(err)
	}
	if v, ok := secret.Data["password"]; !ok || v != nil || secret.ManagedFields != nil {
		t.Errorf("cached Secret: data %q, managed fields %v; want the key without its value, no managed fields", secret.Data, secret.ManagedFields)
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 4, ManagedFields: managed},
		Spec:   appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container}, ServiceAccountName: "app"}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 4, ReadyReplicas: 3}}
	if _, err := cacheTransform(dep)(dep); err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers
	if dep.ManagedFields != nil || *dep.Spec.Replicas != 3 || dep.Status.ReadyReplicas != 3 || dep.Generation != 4 ||
		len(c) != 1 || c[0].Name != "app" || c[0].Image != "app:1" || c[0].Env != nil || c[0].Resources.Limits != nil || dep.Spec.Template.Spec.ServiceAccountName != "" {
		t.Errorf("cached Deployment: %+v", dep)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"app.yaml": "x: 1"}}
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny"}, Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress"}}}
	for _, obj := range []client.Object{cm, np} {
		if _, err := cacheTransform(obj)(obj); err != nil {
			t.Fatal(err)
		}
	}
	if cm.Data != nil || cm.Name != "conf" || np.Spec.PolicyTypes != nil || np.Name != "deny" {
		t.Errorf("cached ConfigMap %+v, NetworkPolicy %+v: want their metadata alone", cm, np)
	}

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ManagedFields: managed}, Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{container}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 2}}}}
	if _, err := slimPod(pod); err != nil {
		t.Fatal(err)
	}
	if got := podLimit(pod, "app"); pod.Spec.NodeName != "n1" || got == nil || got.Cmp(limit) != 0 || pod.Status.ContainerStatuses[0].RestartCount != 2 ||
		len(pod.Spec.Containers[0].Resources.Limits) != 1 || pod.Spec.Containers[0].Env != nil || pod.ManagedFields != nil {
		t.Errorf("cached pod: %+v", pod)
	}
}
