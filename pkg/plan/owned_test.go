/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// deploymentYAML is a Deployment as rendered: what kubectl-onto applied.
const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
  namespace: onto
  labels: {app: gateway}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: gateway
        image: gateway:1.5.0
        ports:
        - {containerPort: 8080, protocol: TCP}
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}
      - name: sidecar
        image: proxy:1
`

// deploymentFields is the field set the API server records for that apply.
const deploymentFields = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{
"k:{\"name\":\"gateway\"}":{".":{},"f:env":{"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{"f:fieldRef":{}}}},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}},
"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`

func decode(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

// liveOf is desired as the server stores it after the apply: defaults added (which
// no one owns), and the managed fields of the apply.
func liveOf(t *testing.T, desired *unstructured.Unstructured, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	t.Helper()
	live := desired.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, "RollingUpdate", "spec", "strategy", "type")
	_ = unstructured.SetNestedField(live.Object, "42", "metadata", "resourceVersion")
	live.SetManagedFields(entries)
	return live
}

func applyEntry(manager, apiVersion, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: apiVersion,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func TestProvenUnchanged(t *testing.T) {
	ours := applyEntry(FieldManager, "apps/v1", deploymentFields)
	for _, tc := range []struct {
		name string
		// edit changes desired (what this run would apply) and live (the cluster).
		edit func(desired, live *unstructured.Unstructured)
		want bool
	}{
		{name: "the same object, with server defaults no one owns", want: true},
		{name: "a value changed in desired", want: false, edit: func(d, _ *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(d.Object, int64(3), "spec", "replicas")
		}},
		{name: "a field desired no longer sets (the apply would remove it)", want: false, edit: func(d, _ *unstructured.Unstructured) {
			unstructured.RemoveNestedField(d.Object, "metadata", "labels")
		}},
		{name: "a field desired adds", want: false, edit: func(d, _ *unstructured.Unstructured) {
			d.SetAnnotations(map[string]string{"note": "new"})
		}},
		{name: "a live value that drifted while still owned", want: false, edit: func(_, l *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(l.Object, int64(5), "spec", "replicas")
		}},
		{name: "an owned field another manager took over (no longer in our set)", want: false, edit: func(_, l *unstructured.Unstructured) {
			l.SetManagedFields([]metav1.ManagedFieldsEntry{applyEntry(FieldManager, "apps/v1", `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:template":{}}}`)})
		}},
		{name: "a container desired adds", want: false, edit: func(d, _ *unstructured.Unstructured) {
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			containers = append(containers, map[string]any{"name": "third", "image": "x"})
			_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
		}},
		{name: "containers in another order than live's", want: false, edit: func(d, _ *unstructured.Unstructured) {
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			containers[0], containers[1] = containers[1], containers[0]
			_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
		}},
		{name: "two desired containers of one name", want: false, edit: func(d, _ *unstructured.Unstructured) {
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			containers[1].(map[string]any)["name"] = "gateway"
			_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
		}},
		{name: "an atomic value the server completed (a field reference without apiVersion)", want: false, edit: func(d, _ *unstructured.Unstructured) {
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			env := containers[0].(map[string]any)["env"].([]any)
			delete(env[0].(map[string]any)["valueFrom"].(map[string]any)["fieldRef"].(map[string]any), "apiVersion")
			_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
		}},
		{name: "a number decoded as float in desired, int live", want: true, edit: func(d, _ *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(d.Object, float64(2), "spec", "replicas")
		}},
		{name: "the last apply was of another API version", want: false, edit: func(_, l *unstructured.Unstructured) {
			l.SetManagedFields([]metav1.ManagedFieldsEntry{applyEntry(FieldManager, "apps/v1beta2", deploymentFields)})
		}},
		{name: "no apply of ours (created by another tool)", want: false, edit: func(_, l *unstructured.Unstructured) {
			l.SetManagedFields([]metav1.ManagedFieldsEntry{applyEntry("other-tool", "apps/v1", deploymentFields)})
		}},
		{name: "another manager's fields beside ours", want: true, edit: func(_, l *unstructured.Unstructured) {
			l.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "3"})
			l.SetManagedFields([]metav1.ManagedFieldsEntry{ours, {Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}}}`)}})
		}},
		{name: "managed fields that do not parse", want: false, edit: func(_, l *unstructured.Unstructured) {
			l.SetManagedFields([]metav1.ManagedFieldsEntry{applyEntry(FieldManager, "apps/v1", `{"x:spec":{}}`)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := decode(t, deploymentYAML)
			live := liveOf(t, desired, ours)
			if tc.edit != nil {
				tc.edit(desired, live)
			}
			if got := ProvenUnchanged(desired, live, FieldManager); got != tc.want {
				t.Errorf("ProvenUnchanged = %v, want %v", got, tc.want)
			}
		})
	}
}
