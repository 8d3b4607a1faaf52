/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Masked replaces every Secret value in a plan, as `kubectl diff` does.
const Masked = "***"

// normalize returns the parts of obj that a plan compares: everything but status and
// the server-maintained metadata.
func normalize(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy().Object
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		// The API server sets these on every write; they say nothing about what the
		// platform asked for.
		for _, k := range [...]string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"} {
			delete(md, k)
		}
		// Controllers write these annotations; they are not part of the desired state.
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, "deployment.kubernetes.io/revision")
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return out
}

// Diff lists the fields that differ between live and merged (the dry-run result), with
// old and new values. Secret data is masked. The order is by path.
func Diff(live, merged *unstructured.Unstructured) []FieldChange {
	var out []FieldChange
	diffValue("", normalize(live), normalize(merged), &out)
	if isSecret(merged) {
		for i := range out {
			if strings.HasPrefix(out[i].Path, "data") || strings.HasPrefix(out[i].Path, "stringData") {
				out[i].Old, out[i].New = maskValue(out[i].Old), maskValue(out[i].New)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func isSecret(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

func maskValue(v any) any {
	if v == nil {
		return nil
	}
	return Masked
}

func diffValue(path string, old, new any, out *[]FieldChange) {
	switch o := old.(type) {
	case map[string]any:
		if n, ok := new.(map[string]any); ok {
			diffMaps(path, o, n, out)
			return
		}
	case []any:
		if n, ok := new.([]any); ok && diffNamedLists(path, o, n, out) {
			return
		}
	}
	if !reflect.DeepEqual(old, new) {
		*out = append(*out, FieldChange{Path: path, Old: old, New: new})
	}
}

func diffMaps(path string, old, new map[string]any, out *[]FieldChange) {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	for k := range keys {
		diffValue(joinPath(path, k), old[k], new[k], out)
	}
}

// diffNamedLists compares lists whose items are objects with a unique "name" (containers,
// ports, env, volumes) item by item, so a changed image reads as
// spec.template.spec.containers[name=api].image rather than the whole list. It returns
// false when the lists are not of that shape.
func diffNamedLists(path string, old, new []any, out *[]FieldChange) bool {
	oldByName, ok1 := byName(old)
	newByName, ok2 := byName(new)
	if !ok1 || !ok2 {
		return false
	}
	names := map[string]bool{}
	for k := range oldByName {
		names[k] = true
	}
	for k := range newByName {
		names[k] = true
	}
	for name := range names {
		o, n := oldByName[name], newByName[name]
		p := fmt.Sprintf("%s[name=%s]", path, name)
		if o == nil || n == nil {
			if o != nil || n != nil {
				*out = append(*out, FieldChange{Path: p, Old: nilIfMissing(o), New: nilIfMissing(n)})
			}
			continue
		}
		diffMaps(p, o, n, out)
	}
	return true
}

func nilIfMissing(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func byName(items []any) (map[string]map[string]any, bool) {
	if len(items) == 0 {
		return map[string]map[string]any{}, true
	}
	out := make(map[string]map[string]any, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := m["name"].(string)
		if !ok || out[name] != nil {
			return nil, false
		}
		out[name] = m
	}
	return out, true
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, "./") {
		key = "[" + key + "]"
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
