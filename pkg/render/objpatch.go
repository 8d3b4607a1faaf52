/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

// objPatch is the patch of one object of an overlay's base, which render applies to the
// object kustomize built (overlay.applyPatches), before the user's patches: a strategic
// merge patch (apimachinery's, with the merge keys the object's API type declares), so
// containers, volumes, env and ports are named by their keys, never by position, and
// "$patch": "delete" removes the item of its key. A container, claim, or item to
// delete that the base lacks fails the render, naming the object (checkItems). Volume
// claim templates merge one claim at a time by metadata.name (the API replaces that
// list whole). Any other list (args, command, envFrom, tolerations) is replaced whole,
// so it is a value computed here. Applied in Go rather than as a kustomize patch:
// kustomize walks the whole object for each patch, JSON 6902 or strategic, a fifth of
// a render.
type objPatch struct {
	// kind and name select the object, as named in the base.
	kind, name string
	// rename, when set, is the object's new name. A ServiceAccount's rename follows
	// into the serviceAccountName of the overlay's pods.
	rename string
	// renameContainer, when set, renames a container of a workload that the patch
	// names by the base's name: [from, to], after the patch.
	renameContainer [2]string
	// doc is the patch: fields of the object, API types or maps.
	doc map[string]any
}

// field returns the map at path of the document, creating the maps on the way.
func (p *objPatch) field(path ...string) map[string]any {
	return fieldOf(p.doc, path...)
}

// set sets the value at path (at least one key) of the document.
func (p *objPatch) set(v any, path ...string) {
	p.field(path[:len(path)-1]...)[path[len(path)-1]] = v
}

// podSpec is the pod template's spec of a workload (Deployment, StatefulSet, Job).
func (p *objPatch) podSpec() map[string]any {
	return p.field("spec", "template", "spec")
}

// container is the patch of the pod template's container name.
func (p *objPatch) container(name string) map[string]any {
	return item(p.podSpec(), "containers", "name", name)
}

// initContainer is the patch of the pod template's init container name.
func (p *objPatch) initContainer(name string) map[string]any {
	return item(p.podSpec(), "initContainers", "name", name)
}

// fieldOf returns the map at path of m, creating the maps on the way.
func fieldOf(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return m
}

// item returns the entry of the list field of m whose merge key is value, creating it
// (with the key set) at the end of the list.
func item(m map[string]any, list, key string, value any) map[string]any {
	items, _ := m[list].([]any)
	if e := listItem(items, key, value); e != nil {
		return e
	}
	e := map[string]any{key: value}
	m[list] = append(items, e)
	return e
}

// appendItems appends entries to the list field of m. Each must carry its list's merge
// key: the patch merges it with the base's entry of that key, or adds it, in this
// order, before the base's entries (the strategic merge puts a patch's items first).
func appendItems(m map[string]any, list string, entries ...any) {
	items, _ := m[list].([]any)
	m[list] = append(items, entries...)
}

// deleteItem removes from the list field of the base the entry whose merge keys are
// keys (a strategic merge patch's $patch: delete): nothing else, wherever it is.
func deleteItem(m map[string]any, list string, keys map[string]any) {
	e := map[string]any{"$patch": "delete"}
	for k, v := range keys {
		e[k] = v
	}
	appendItems(m, list, e)
}

// namedItems are the lists whose items a patch names but must never add, by the key
// that names them: a base that lacks the container or claim a patch is written for
// fails the render rather than gain a half-made one.
var namedItems = map[string]string{"containers": "name", "initContainers": "name", "volumeClaimTemplates": "metadata.name"}

// apply applies p to obj, one of the objects the overlay built, and returns the
// result. The merge is apimachinery's strategic merge patch with the object's own API
// type (its patchMergeKey and patchStrategy tags); volume claim templates, a list the
// API replaces whole, are merged one claim at a time by metadata.name, so a patch
// changes the claim it names and keeps the base's other fields.
func (p *objPatch) apply(obj map[string]any) (map[string]any, error) {
	// Through JSON, so the patch's API types become the maps, int64 and strings the
	// built objects hold.
	data, err := json.Marshal(p.doc)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := utiljson.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if err := checkItems(obj, doc, ""); err != nil {
		return nil, err
	}
	var claims []any
	if spec := nestedMap(doc, "spec"); spec != nil {
		claims, _ = spec["volumeClaimTemplates"].([]any)
		delete(spec, "volumeClaimTemplates")
	}
	apiVersion, _ := obj["apiVersion"].(string)
	typed, err := scheme.Scheme.New(schema.FromAPIVersionAndKind(apiVersion, p.kind))
	if err != nil {
		return nil, err
	}
	out, err := strategicMerge(obj, doc, typed)
	if err != nil {
		return nil, err
	}
	for _, c := range claims {
		claim := c.(map[string]any)
		base := nestedSlice(out, "spec", "volumeClaimTemplates")
		i := slices.IndexFunc(base, func(e any) bool {
			m, ok := e.(map[string]any)
			return ok && mergeKeyOf(m, "metadata.name") == mergeKeyOf(claim, "metadata.name")
		})
		if base[i], err = strategicMerge(base[i].(map[string]any), claim, &corev1.PersistentVolumeClaim{}); err != nil {
			return nil, err
		}
	}
	if from, to := p.renameContainer[0], p.renameContainer[1]; from != "" {
		c := listItem(nestedSlice(out, "spec", "template", "spec", "containers"), "name", from)
		if c == nil {
			return nil, fmt.Errorf("no container %q", from)
		}
		c["name"] = to
	}
	return out, nil
}

// strategicMerge is the strategic merge patch of obj by patch, with the merge keys and
// strategies of the API type typed.
func strategicMerge(obj, patch map[string]any, typed any) (map[string]any, error) {
	meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return nil, err
	}
	return strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(obj, patch, meta)
}

// checkItems fails when patch, under path of obj, names an item of a namedItems list
// that obj lacks, or deletes ("$patch": "delete") a list item obj lacks: a strategic
// merge would add the one and silently skip the other.
func checkItems(obj, patch map[string]any, path string) error {
	for k, pv := range patch {
		at := path + "." + k
		switch pt := pv.(type) {
		case map[string]any:
			if o, ok := obj[k].(map[string]any); ok {
				if err := checkItems(o, pt, at); err != nil {
					return err
				}
			}
		case []any:
			base, _ := obj[k].([]any)
			for _, it := range pt {
				item, ok := it.(map[string]any)
				if !ok {
					continue
				}
				key, named := namedItems[k]
				if !named && item["$patch"] != "delete" {
					continue
				}
				if key == "" {
					key = portKey(item)
					if k != "ports" {
						key = "name"
					}
				}
				v := mergeKeyOf(item, key)
				i := slices.IndexFunc(base, func(e any) bool {
					m, ok := e.(map[string]any)
					return ok && mergeKeyOf(m, key) == v
				})
				if i < 0 && item["$patch"] == "delete" {
					return fmt.Errorf("%s: no item of %s %v to delete", at, key, v)
				}
				if i < 0 {
					return fmt.Errorf("%s: no item of %s %v", at, key, v)
				}
				if o, ok := base[i].(map[string]any); ok && item["$patch"] != "delete" {
					if err := checkItems(o, item, fmt.Sprintf("%s[%s=%v]", at, key, v)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// mergeKeyOf is the value of the key of an item, a field or a dotted path of fields.
func mergeKeyOf(item map[string]any, key string) any {
	if meta, name, ok := strings.Cut(key, "."); ok {
		return mergeKeyOf(nestedMap(item, meta), name)
	}
	return item[key]
}

// portKey is the merge key of a port: containerPort in a container, port in a Service.
func portKey(item map[string]any) string {
	if _, ok := item["containerPort"]; ok {
		return "containerPort"
	}
	return "port"
}

// listItem is the item of items whose key is value, nil when none.
func listItem(items []any, key string, value any) map[string]any {
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m[key] == value {
			return m
		}
	}
	return nil
}

// nestedSlice is the list at path of m, nil when there is none; not a copy, so a
// change to its items changes m.
func nestedSlice(m map[string]any, path ...string) []any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	l, _ := v.([]any)
	return l
}

// nestedMap is the map at path of m, nil when there is none; not a copy.
func nestedMap(m map[string]any, path ...string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	l, _ := v.(map[string]any)
	return l
}
