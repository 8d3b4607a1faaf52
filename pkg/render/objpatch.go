/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// objPatch is the strategic merge patch of one object of an overlay's base. It names
// list items by their merge key, as the Kubernetes API declares it (patchMergeKey):
// containers, init containers, volumes and env by name, volume mounts by mountPath,
// ports by number. A reordered base still gets every change where it belongs, which a
// JSON 6902 path by index (containers/0) does not. A list without a merge key (args,
// command, envFrom, volumeClaimTemplates) is replaced whole, so it is a value computed
// here. A patch that names a container the base lacks would add a container with no
// image: checkContainers refuses the render instead.
type objPatch struct {
	// kind and name select the object, as named in the base.
	kind, name string
	// rename, when set, is the object's new name.
	rename string
	// doc is the patch's body: every field but apiVersion, kind and metadata.name.
	doc map[string]any
}

// apiVersions are the groups and versions of the kinds of the bases that overlays patch.
var apiVersions = map[string]string{
	"Deployment":     "apps/v1",
	"StatefulSet":    "apps/v1",
	"Job":            "batch/v1",
	"Service":        "v1",
	"ServiceAccount": "v1",
}

// kustomizePatch is the kustomization entry of p: the document, its target, and the
// option that lets it rename the object (kustomize then follows the new name in the
// references to it, as serviceAccountName).
func (p *objPatch) kustomizePatch() (types.Patch, error) {
	name := p.name
	if p.rename != "" {
		name = p.rename
	}
	doc := map[string]any{"apiVersion": apiVersions[p.kind], "kind": p.kind}
	for k, v := range p.doc {
		doc[k] = v
	}
	meta := map[string]any{}
	if m, ok := p.doc["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["name"] = name
	doc["metadata"] = meta
	text, err := toJSON(doc)
	if err != nil {
		return types.Patch{}, err
	}
	patch := types.Patch{
		Patch:  text,
		Target: &types.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: p.kind}, Name: "^" + p.name + "$"}},
	}
	if p.rename != "" {
		patch.Options = &types.PatchArgs{AllowNameChange: true}
	}
	return patch, nil
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

// The merge-keyed lists the overlays add to or change items of, with the key of their
// items: a pod's, and a container's.
var (
	podLists       = map[string]string{"containers": "name", "initContainers": "name", "volumes": "name"}
	containerLists = map[string]string{"env": "name", "volumeMounts": "mountPath"}
)

// keepBaseOrder makes the lists of a workload patch keep the base's order. Kustomize
// puts the items of a strategic merge patch before the base's (it merges in prepend
// order), which would move a container or an appended env variable to the front, and
// change the pod template of every running workload. So each list of the patch first
// names the base's items in the base's order, by merge key only (a no-op for the
// merge), each with the patch's changes if it has any, then the new items. base is the
// workload as its base declares it, nil when there is none.
func (p *objPatch) keepBaseOrder(base map[string]any) {
	if base == nil {
		return
	}
	pod := nestedMap(p.doc, "spec", "template", "spec")
	basePod := nestedMap(base, "spec", "template", "spec")
	if pod == nil || basePod == nil {
		return
	}
	for list, key := range podLists {
		items, ok := pod[list].([]any)
		if !ok {
			continue
		}
		baseItems, _ := basePod[list].([]any)
		if list != "volumes" {
			for _, it := range items {
				c, ok := it.(map[string]any)
				if !ok {
					continue
				}
				bc := baseItem(baseItems, key, c[key])
				for clist, ckey := range containerLists {
					if citems, ok := c[clist].([]any); ok && bc != nil {
						cbase, _ := bc[clist].([]any)
						c[clist] = inBaseOrder(citems, cbase, ckey)
					}
				}
			}
		}
		pod[list] = inBaseOrder(items, baseItems, key)
	}
}

// inBaseOrder lists the base's items by their key, or as the patch changes them, in
// the base's order, then the patch's other items in their order.
func inBaseOrder(items, base []any, key string) []any {
	if len(base) == 0 {
		return items
	}
	out := make([]any, 0, len(base)+len(items))
	placed := map[any]bool{}
	for _, b := range base {
		bm, ok := b.(map[string]any)
		if !ok {
			return items
		}
		k := bm[key]
		entry := any(map[string]any{key: k})
		for _, it := range items {
			if itemKey(it, key) == k {
				entry = it
				placed[k] = true
				break
			}
		}
		out = append(out, entry)
	}
	for _, it := range items {
		if !placed[itemKey(it, key)] {
			out = append(out, it)
		}
	}
	return out
}

// itemKey is the merge key of a list item of a patch, a map or an API type.
func itemKey(it any, key string) any {
	switch t := it.(type) {
	case map[string]any:
		return t[key]
	case corev1.EnvVar:
		return t.Name
	case corev1.Volume:
		return t.Name
	case corev1.VolumeMount:
		return t.MountPath
	}
	return nil
}

// baseItem is the item of a base's list whose key is value, nil when none.
func baseItem(items []any, key string, value any) map[string]any {
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m[key] == value {
			return m
		}
	}
	return nil
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
