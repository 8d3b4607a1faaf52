/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// TestDeleteSaysWhetherTheObjectIsGone: Delete reads the API server's answer. A
// ConfigMap is answered by a Status, a Service and a ServiceAccount by the deleted
// object (the Service's own status field is an object, not the Status's string);
// all three are gone. Held by a finalizer, a ConfigMap and a Namespace (cluster-scoped)
// are answered by the object marked for deletion: not gone, and still there. (The
// Namespace's own finalizer alone would not do: an empty namespace may be gone before
// the test looks.) A missing object and a UID precondition that fails keep
// their API errors, as the dynamic client's.
func TestDeleteSaysWhetherTheObjectIsGone(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	create := func(obj runtime.Object) *unstructured.Unstructured {
		t.Helper()
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		ri, err := clients.Resource(u)
		if err != nil {
			t.Fatal(err)
		}
		created, err := ri.Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", kube.Ref(u), err)
		}
		return created
	}
	meta := func(name string, finalizers ...string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: finalizers}
	}
	const hold = "onto.dev/test-hold"
	heldNamespace := testcluster.UniqueName(t, "delete-held")
	for _, tc := range []struct {
		obj  runtime.Object
		gone bool
	}{
		{&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("plain")}, true},
		{&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta("plain"),
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, true},
		{&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta("plain")}, true},
		{&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("held", hold)}, false},
		{&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: heldNamespace, Finalizers: []string{hold}}}, false},
	} {
		obj := create(tc.obj)
		ri, err := clients.Resource(obj)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			if len(obj.GetFinalizers()) > 0 {
				if _, err := ri.Patch(context.Background(), obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Error(err)
				}
			}
			_ = ri.Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
		})
		gone, err := clients.Delete(ctx, obj, metav1.DeleteOptions{})
		if err != nil {
			t.Fatalf("delete %s: %v", kube.Ref(obj), err)
		}
		if gone != tc.gone {
			t.Errorf("delete %s: gone = %v, want %v", kube.Ref(obj), gone, tc.gone)
		}
		live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case tc.gone && !apierrors.IsNotFound(err):
			t.Errorf("%s after a delete answered gone: %v", kube.Ref(obj), err)
		case !tc.gone && (err != nil || live.GetDeletionTimestamp() == nil):
			t.Errorf("%s after a delete answered terminating: %v, want it there, marked for deletion", kube.Ref(obj), err)
		}
	}

	missing := &unstructured.Unstructured{}
	missing.SetAPIVersion("v1")
	missing.SetKind("ConfigMap")
	missing.SetNamespace(ns)
	missing.SetName("missing")
	if _, err := clients.Delete(ctx, missing, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete of a missing ConfigMap: %v, want NotFound", err)
	}
	other := create(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("other")})
	uid := types.UID("not-" + string(other.GetUID()))
	if _, err := clients.Delete(ctx, other, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with another object's UID: %v, want Conflict", err)
	}
}
