/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// ClaimResize is a PersistentVolumeClaim a replace expands before it recreates its
// StatefulSet.
type ClaimResize struct {
	Name string `json:"name"`
	// Template is the StatefulSet's volumeClaimTemplate the claim was made from.
	Template string `json:"template"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// ImmutableError says a change needs what a StatefulSet cannot do in place and
// kubectl-onto will not do for it (a new storage class, a smaller volume, a new
// selector). Nothing is planned.
type ImmutableError struct {
	Object ObjectRef
	Field  string
	Reason string
}

func (e *ImmutableError) Error() string {
	return fmt.Sprintf("%s: %s cannot change: %s; nothing was planned", e.Object, e.Field, e.Reason)
}

// isImmutableStatefulSetUpdate reports whether err is the API server refusing an
// update of a StatefulSet's fields other than the ones it may change in place (the
// wording differs between versions: "updates to statefulset spec for fields other
// than ..." or "spec.volumeClaimTemplates: ... field is immutable").
func isImmutableStatefulSetUpdate(obj *unstructured.Unstructured, err error) bool {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "apps" || gvk.Kind != "StatefulSet" || !apierrors.IsInvalid(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "updates to statefulset spec for fields other than") || strings.Contains(msg, "field is immutable")
}

// planStatefulSetReplace plans a StatefulSet whose volumeClaimTemplates grew: the
// claims are expanded, then the StatefulSet is deleted without its pods (orphaned) and
// created again, adopting them. Everything else of the change is dry-run as an update
// against the live templates, so it is validated as usual. A storage class change, a
// smaller volume or any other immutable field is an *ImmutableError.
func (pl *Planner) planStatefulSetReplace(ctx context.Context, ri dynamic.ResourceInterface, obj, live *unstructured.Unstructured, conflicts []Conflict, updateErr error) (Change, error) {
	ref := RefOf(obj)
	want, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	have, _, _ := unstructured.NestedSlice(live.Object, "spec", "volumeClaimTemplates")
	haveByName := map[string]map[string]any{}
	for _, t := range have {
		m, _ := t.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "metadata", "name")
		haveByName[name] = m
	}
	type grown struct{ template, from, to string }
	var grows []grown
	for _, t := range want {
		m, _ := t.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "metadata", "name")
		old, ok := haveByName[name]
		field := fmt.Sprintf("spec.volumeClaimTemplates[name=%s]", name)
		if !ok {
			return Change{}, &ImmutableError{Object: ref, Field: field, Reason: "a volume added to a StatefulSet needs new claims for existing pods; add it as a new component or migrate the data by hand"}
		}
		oldClass, _, _ := unstructured.NestedString(old, "spec", "storageClassName")
		newClass, _, _ := unstructured.NestedString(m, "spec", "storageClassName")
		if oldClass != newClass {
			return Change{}, &ImmutableError{Object: ref, Field: field + ".spec.storageClassName",
				Reason: fmt.Sprintf("%q → %q: existing volumes keep their class; move the data to a new platform or component instead", oldClass, newClass)}
		}
		oldSize, _, _ := unstructured.NestedString(old, "spec", "resources", "requests", "storage")
		newSize, _, _ := unstructured.NestedString(m, "spec", "resources", "requests", "storage")
		o, oerr := resource.ParseQuantity(oldSize)
		n, nerr := resource.ParseQuantity(newSize)
		if oerr != nil || nerr != nil {
			return Change{}, fmt.Errorf("%s: volume sizes %q → %q: %w", ref, oldSize, newSize, updateErr)
		}
		switch n.Cmp(o) {
		case -1:
			return Change{}, &ImmutableError{Object: ref, Field: field + ".spec.resources.requests.storage",
				Reason: fmt.Sprintf("%s → %s: volumes only grow", oldSize, newSize)}
		case 1:
			grows = append(grows, grown{template: name, from: oldSize, to: newSize})
		}
	}
	if len(want) != len(have) {
		return Change{}, &ImmutableError{Object: ref, Field: "spec.volumeClaimTemplates", Reason: "volumes cannot be removed from a StatefulSet that has data in them"}
	}

	// The rest of the change, validated by the API server as an in-place update.
	inPlace := obj.DeepCopy()
	_ = unstructured.SetNestedSlice(inPlace.Object, have, "spec", "volumeClaimTemplates")
	data, err := inPlace.MarshalJSON()
	if err != nil {
		return Change{}, err
	}
	force := true
	merged, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: pl.fieldManager(), DryRun: []string{metav1.DryRunAll}, Force: &force})
	if isImmutableStatefulSetUpdate(obj, err) {
		// Something other than the volumes changed that a StatefulSet keeps (selector,
		// serviceName, podManagementPolicy): the API server's words are the best reason.
		return Change{}, &ImmutableError{Object: ref, Field: "spec", Reason: err.Error()}
	}
	if err != nil {
		return Change{}, err
	}
	if len(grows) == 0 {
		return Change{}, updateErr
	}

	ch := Change{Action: ActionReplace, Object: ref, ResourceVersion: live.GetResourceVersion(), Conflicts: conflicts, Desired: obj, UID: string(live.GetUID())}
	ch.Fields = Diff(live, merged)
	claims, err := pl.Clients.Kube.CoreV1().PersistentVolumeClaims(obj.GetNamespace()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return Change{}, fmt.Errorf("list the claims of %s: %w", ref, err)
	}
	for _, g := range grows {
		ch.Fields = append(ch.Fields, FieldChange{Path: fmt.Sprintf("spec.volumeClaimTemplates[name=%s].spec.resources.requests.storage", g.template), Old: g.from, New: g.to})
		prefix := g.template + "-" + obj.GetName() + "-"
		for _, c := range claims.Items {
			if !strings.HasPrefix(c.Name, prefix) || strings.ContainsRune(strings.TrimPrefix(c.Name, prefix), '-') {
				continue
			}
			class := ""
			if c.Spec.StorageClassName != nil {
				class = *c.Spec.StorageClassName
			}
			if err := pl.checkExpandable(ctx, ref, class); err != nil {
				return Change{}, err
			}
			ch.Claims = append(ch.Claims, ClaimResize{Name: c.Name, Template: g.template, From: g.from, To: g.to})
		}
	}
	sort.Slice(ch.Fields, func(i, j int) bool { return ch.Fields[i].Path < ch.Fields[j].Path })
	return ch, nil
}

// checkExpandable refuses, before anything is written, volumes whose storage class
// cannot grow them.
func (pl *Planner) checkExpandable(ctx context.Context, ref ObjectRef, class string) error {
	if class == "" {
		return &ImmutableError{Object: ref, Field: "spec.volumeClaimTemplates", Reason: "its claims have no storage class, so they cannot be expanded"}
	}
	sc, err := pl.Clients.Kube.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: read storage class %s: %w", ref, class, err)
	}
	if sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		return &ImmutableError{Object: ref, Field: "spec.volumeClaimTemplates",
			Reason: fmt.Sprintf("storage class %s does not allow volume expansion (allowVolumeExpansion is not true)", class)}
	}
	return nil
}
