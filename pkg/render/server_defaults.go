/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// completeAtomicDefaults writes out, in obj, the defaults the API server fills in inside
// values that server-side apply treats as one atomic value: a field reference's
// apiVersion, and a StatefulSet's volume claim templates (their apiVersion and kind, the
// volume mode, the claim's pending phase). The server stores them either way; rendered
// too, the live value equals the rendered one, so a plan can prove the object unchanged
// from its managed fields without a dry-run (plan.ProvenUnchanged). A value left
// incomplete is still right, only planned with a request.
func completeAtomicDefaults(obj *unstructured.Unstructured) {
	completeFieldRefs(obj.Object)
	if obj.GetAPIVersion() != "apps/v1" || obj.GetKind() != "StatefulSet" {
		return
	}
	templates, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	for _, t := range templates {
		claim, ok := t.(map[string]any)
		if !ok {
			continue
		}
		setDefault(claim, "v1", "apiVersion")
		setDefault(claim, "PersistentVolumeClaim", "kind")
		setDefault(claim, "Filesystem", "spec", "volumeMode")
		setDefault(claim, "Pending", "status", "phase")
	}
	if len(templates) > 0 {
		_ = unstructured.SetNestedSlice(obj.Object, templates, "spec", "volumeClaimTemplates")
	}
}

// completeFieldRefs sets apiVersion v1, the server's default, on every field reference
// (an ObjectFieldSelector: env valueFrom, downward API volumes) below v.
func completeFieldRefs(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if ref, ok := child.(map[string]any); ok && k == "fieldRef" {
				if _, has := ref["fieldPath"]; has {
					setDefault(ref, "v1", "apiVersion")
				}
				continue
			}
			completeFieldRefs(child)
		}
	case []any:
		for _, child := range t {
			completeFieldRefs(child)
		}
	}
}

// setDefault sets the string at path in m when nothing is there.
func setDefault(m map[string]any, value string, path ...string) {
	if _, found, _ := unstructured.NestedFieldNoCopy(m, path...); !found {
		_ = unstructured.SetNestedField(m, value, path...)
	}
}
