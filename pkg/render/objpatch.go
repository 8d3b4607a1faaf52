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

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// objPatch is the patch of one object of an overlay's base, which render applies to the
// object kustomize built (overlay.applyPatches), before the user's patches. It works as
// a strategic merge patch does, with the merge keys the Kubernetes API declares
// (patchMergeKey): maps merge, a null removes a field, containers, init containers,
// volumes, env and pull secrets are list items named by name, volume mounts by
// mountPath, ports by number, and an item with "$patch": "delete" removes the item of
// its key. A reordered base still gets every change where it belongs, which a JSON
// 6902 path by index (containers/0) did not; a container, or an item to delete, that
// the base lacks fails the render, naming the object. Volume claim templates are
// items named by their metadata.name (the API replaces that list whole). Any other
// list (args, command, envFrom, tolerations) is replaced whole, so it is a value
// computed here. Applied in Go rather than as a kustomize patch: kustomize walks the
// whole object for each patch, JSON 6902 or strategic, a fifth of a render.
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
	for _, it := range items {
		if e, ok := it.(map[string]any); ok && e[key] == value {
			return e
		}
	}
	e := map[string]any{key: value}
	m[list] = append(items, e)
	return e
}

// appendItems appends entries to the list field of m. Each must carry its list's merge
// key: the patch merges it with the base's entry of that key, or appends it after the
// base's entries, in this order.
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

// mergeKeys are the merge keys of the lists a patch merges item by item, by field name.
var mergeKeys = map[string]string{
	"containers":       "name",
	"initContainers":   "name",
	"volumes":          "name",
	"env":              "name",
	"imagePullSecrets": "name",
	"volumeMounts":     "mountPath",
	"ports":            "", // portKey
	// Not a merge key of the API, which replaces the list whole: the claim's name,
	// so a patch changes the claim it names and keeps the base's other fields.
	"volumeClaimTemplates": "metadata.name",
}

// mustExist are the lists whose items a patch changes but never adds.
var mustExist = map[string]bool{"containers": true, "initContainers": true, "volumeClaimTemplates": true}

// apply applies p to obj, one of the objects the overlay built.
func (p *objPatch) apply(obj map[string]any) error {
	// Through JSON, so the patch's API types become the maps, int64 and strings the
	// built objects hold.
	data, err := json.Marshal(p.doc)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := utiljson.Unmarshal(data, &doc); err != nil {
		return err
	}
	if err := mergeMap(obj, doc, ""); err != nil {
		return err
	}
	if from, to := p.renameContainer[0], p.renameContainer[1]; from != "" {
		c := listItem(nestedSlice(obj, "spec", "template", "spec", "containers"), "name", from)
		if c == nil {
			return fmt.Errorf("no container %q", from)
		}
		c["name"] = to
	}
	return nil
}

// mergeMap merges patch into dst; path is where dst is, for errors.
func mergeMap(dst, patch map[string]any, path string) error {
	for k, pv := range patch {
		at := path + "." + k
		switch pt := pv.(type) {
		case nil:
			delete(dst, k)
		case map[string]any:
			d, ok := dst[k].(map[string]any)
			if !ok {
				dst[k] = pt
				continue
			}
			if err := mergeMap(d, pt, at); err != nil {
				return err
			}
		case []any:
			key, keyed := mergeKeys[k]
			if !keyed {
				dst[k] = pt
				continue
			}
			list, err := mergeList(dst[k], pt, key, mustExist[k], at)
			if err != nil {
				return err
			}
			dst[k] = list
		default:
			dst[k] = pv
		}
	}
	return nil
}

// mergeList merges the items of patch into the list dst by key (portKey when empty):
// an item merges into the base's of the same key, or is appended (an error when
// mustExist), or deletes it ("$patch": "delete", an error when there is none).
func mergeList(dst any, patch []any, key string, mustExist bool, path string) ([]any, error) {
	list, _ := dst.([]any)
	for _, it := range patch {
		item, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: an item that is not an object", path)
		}
		k := key
		if k == "" {
			k = portKey(item)
		}
		v := mergeKeyOf(item, k)
		i := slices.IndexFunc(list, func(e any) bool {
			m, ok := e.(map[string]any)
			return ok && mergeKeyOf(m, k) == v
		})
		switch {
		case item["$patch"] == "delete":
			if i < 0 {
				return nil, fmt.Errorf("%s: no item of %s %v to delete", path, k, v)
			}
			list = slices.Delete(list, i, i+1)
		case i >= 0:
			if err := mergeMap(list[i].(map[string]any), item, fmt.Sprintf("%s[%s=%v]", path, k, v)); err != nil {
				return nil, err
			}
		case mustExist:
			return nil, fmt.Errorf("%s: no item of %s %v", path, k, v)
		default:
			list = append(list, item)
		}
	}
	return list, nil
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

// nestedSlice is the list at path of m, nil when there is none.
func nestedSlice(m map[string]any, path ...string) []any {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	l, _ := m[path[len(path)-1]].([]any)
	return l
}

// nestedMap is the map at path of m, nil when there is none.
func nestedMap(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
