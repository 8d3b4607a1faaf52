/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSecretKeysOnly: the watch's cache keeps a Secret's keys, which a plan checks,
// and none of its values.
func TestSecretKeysOnly(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"password": []byte("hunter2")}, StringData: map[string]string{"token": "t0ken"}}
	out, err := secretKeysOnly(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Secret)
	if v, ok := got.Data["password"]; !ok || len(v) != 0 || got.StringData != nil {
		t.Fatalf("secret after the transform: data %q, stringData %q; want the key password without its value", got.Data, got.StringData)
	}
	u, err := cachedUnstructured(got, schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedMap(u.Object, "data")
	if _, ok := data["password"]; !ok || u.GetKind() != "Secret" {
		t.Fatalf("the cached Secret as the planner reads it: %v; want kind Secret and the key password", u.Object)
	}
}
