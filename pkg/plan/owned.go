/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"bytes"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ProvenUnchanged reports whether a server-side apply of obj by manager over live
// provably changes nothing, without asking the API server: a plan of an unchanged
// platform then needs its lists and no request per object.
//
// The proof reads the fields manager's last apply owns (live's managedFields). An apply
// sets the fields it names and removes the fields its manager owned before and no
// longer names; everything else stays. So it changes nothing when obj names exactly the
// owned fields (none added, none dropped) and every one already holds obj's value.
// Another manager taking a field over, by apply or update, removes it from the owned
// set, so a drifted field fails the proof too.
//
// The owned set is also what tells the structure apart without a schema: a list whose
// elements it keys (k:{...}) is associative, a field it owns with no children is
// compared whole. Whatever the proof cannot decide (an apiVersion other than the last
// apply's, a list whose order differs from live's, a value the server normalised, such
// as 0.5 for 500m) is "not proven": the caller dry-runs, so a false "unchanged" is the
// only error that matters, and every rule below errs the other way.
func ProvenUnchanged(obj, live *unstructured.Unstructured, manager string) bool {
	owned, ok := appliedFields(live, manager, obj.GetAPIVersion())
	if !ok {
		return false
	}
	// Identity fields are never in a managed set: the server strips them, and the
	// live object was found by them.
	desired := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		if k != "apiVersion" && k != "kind" {
			desired[k] = v
		}
	}
	if md, ok := desired["metadata"].(map[string]any); ok {
		trimmed := make(map[string]any, len(md))
		for k, v := range md {
			if k != "name" && k != "namespace" {
				trimmed[k] = v
			}
		}
		desired["metadata"] = trimmed
	}
	return sameMap(desired, live.Object, owned)
}

// appliedFields is the field set of manager's apply entry in live's managedFields,
// when there is exactly one, for apiVersion. The entries are read from live's map as
// they are: GetManagedFields would encode and decode every entry of every manager,
// and a plan of 100 tenants proves 7,000 objects.
func appliedFields(live *unstructured.Unstructured, manager, apiVersion string) (*fieldpath.Set, bool) {
	entries, _, _ := unstructured.NestedSlice(live.Object, "metadata", "managedFields")
	var entry map[string]any
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		if m["manager"] != manager || m["operation"] != string(metav1.ManagedFieldsOperationApply) || !isEmpty(m["subresource"]) {
			continue
		}
		if entry != nil {
			return nil, false
		}
		entry = m
	}
	fields, ok := entry["fieldsV1"].(map[string]any)
	if entry == nil || entry["apiVersion"] != apiVersion || !ok {
		return nil, false
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, false
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, false
	}
	return set, true
}

// isEmpty reports whether v, a managedFields entry's string field, is absent or "".
func isEmpty(v any) bool {
	s, isString := v.(string)
	return v == nil || (isString && s == "")
}

// sameMap reports whether desired, a map node, sets exactly the fields owned holds
// below it to the values live has there. An empty desired map is a node of its own.
func sameMap(desired map[string]any, live any, owned *fieldpath.Set) bool {
	liveMap, ok := live.(map[string]any)
	if !ok {
		return false
	}
	named := 0
	for k, v := range desired {
		pe := fieldpath.PathElement{FieldName: &k}
		if !sameNode(v, liveMap[k], liveMap != nil && hasKey(liveMap, k), pe, owned) {
			return false
		}
		named++
	}
	// Every field owned here is named by desired: an owned field desired dropped is
	// one the apply would remove.
	return countElements(owned) == named
}

// sameNode checks one child of a node: the child pe of owned must exist, and desired
// must match live at it, whole for a leaf, field by field or element by element for
// a node with children.
func sameNode(desired, live any, liveHas bool, pe fieldpath.PathElement, owned *fieldpath.Set) bool {
	child, hasChildren := owned.Children.Get(pe)
	if !hasChildren {
		// A leaf (or a value whose structure the set keeps atomic): owned and equal.
		return owned.Members.Has(pe) && liveHas && value.Equals(value.NewValueInterface(desired), value.NewValueInterface(live))
	}
	switch d := desired.(type) {
	case map[string]any:
		return sameMap(d, live, child)
	case []any:
		return sameList(d, live, child)
	default:
		return false
	}
}

// sameList matches an associative list (or a set) element by element: each desired
// element is an element owned names, live holds the same elements in the same order
// (an apply may reorder; a list other managers added to may merge differently), and
// each matches its live counterpart.
func sameList(desired []any, live any, owned *fieldpath.Set) bool {
	liveList, ok := live.([]any)
	if !ok || len(liveList) != len(desired) || countElements(owned) != len(desired) {
		return false
	}
	seen := make([]fieldpath.PathElement, 0, len(desired))
	for i, d := range desired {
		pe, ok := elementOf(d, i, owned)
		if !ok {
			return false
		}
		// Two desired elements with one key would pass the count with an owned
		// element unmatched.
		for _, s := range seen {
			if s.Equals(pe) {
				return false
			}
		}
		seen = append(seen, pe)
		if other, ok := elementOf(liveList[i], i, owned); !ok || !other.Equals(pe) {
			return false
		}
		if !sameNode(d, liveList[i], true, pe, owned) {
			return false
		}
	}
	return true
}

// elementOf is the path element of owned that names the list element v at index i.
func elementOf(v any, i int, owned *fieldpath.Set) (fieldpath.PathElement, bool) {
	var found fieldpath.PathElement
	ok := false
	visit := func(pe fieldpath.PathElement) {
		if ok {
			return
		}
		switch {
		case pe.Index != nil:
			ok = *pe.Index == i
		case pe.Value != nil:
			ok = value.Equals(*pe.Value, value.NewValueInterface(v))
		case pe.Key != nil:
			m, isMap := v.(map[string]any)
			ok = isMap
			for _, f := range *pe.Key {
				fv, has := m[f.Name]
				if !ok || !has || !value.Equals(f.Value, value.NewValueInterface(fv)) {
					ok = false
					break
				}
			}
		}
		if ok {
			found = pe
		}
	}
	owned.Members.Iterate(visit)
	owned.Children.Iterate(visit)
	return found, ok
}

// countElements is the number of distinct child path elements of s, members or nodes.
func countElements(s *fieldpath.Set) int {
	n := s.Members.Size()
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		if !s.Members.Has(pe) {
			n++
		}
	})
	return n
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}
