/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package inventory records which objects belong to a platform, the way kubectl's
// ApplySets do: the OntoPlatform object is the parent, every object it owns carries
// the label applyset.kubernetes.io/part-of=<id>, and the parent lists the group-kinds
// its members may have. Pruning and uninstall only ever touch objects with that label,
// so nothing the platform does not own is deleted.
package inventory

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// ApplySet labels and annotations (KEP-3659), so kubectl and other tools recognise the
// inventory.
const (
	PartOfLabel             = "applyset.kubernetes.io/part-of"
	IDLabel                 = "applyset.kubernetes.io/id"
	ToolingAnnotation       = "applyset.kubernetes.io/tooling"
	ContainsGroupKindsAnnot = "applyset.kubernetes.io/contains-group-kinds"
	// Tooling is the value of ToolingAnnotation on parents this tool manages.
	Tooling = "kubectl-onto/v1"
)

// ID is the ApplySet id of a platform: base64url(sha256(<name>.<namespace>.<kind>.<group>))
// as KEP-3659 defines it, so it is stable and unique per parent object.
func ID(namespace, name string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, v1alpha1.Kind, v1alpha1.GroupVersion.Group}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// Label marks obj as a member of the inventory id.
func Label(obj *unstructured.Unstructured, id string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[PartOfLabel] = id
	obj.SetLabels(labels)
}

// GroupKinds returns the sorted, de-duplicated group-kinds of objs.
func GroupKinds(objs []*unstructured.Unstructured) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	for _, o := range objs {
		seen[o.GroupVersionKind().GroupKind()] = true
	}
	out := make([]schema.GroupKind, 0, len(seen))
	for gk := range seen {
		out = append(out, gk)
	}
	sortGroupKinds(out)
	return out
}

// FormatGroupKinds is the value of ContainsGroupKindsAnnot: Kind.group, comma-separated.
func FormatGroupKinds(gks []schema.GroupKind) string {
	parts := make([]string, len(gks))
	for i, gk := range gks {
		parts[i] = gk.String()
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// ParseGroupKinds reads ContainsGroupKindsAnnot.
func ParseGroupKinds(s string) []schema.GroupKind {
	var out []schema.GroupKind
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, schema.ParseGroupKind(p))
		}
	}
	sortGroupKinds(out)
	return out
}

// Union merges group-kind lists, sorted and without duplicates.
func Union(lists ...[]schema.GroupKind) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	for _, l := range lists {
		for _, gk := range l {
			if !seen[gk] {
				seen[gk] = true
				out = append(out, gk)
			}
		}
	}
	sortGroupKinds(out)
	return out
}

func sortGroupKinds(gks []schema.GroupKind) {
	sort.Slice(gks, func(i, j int) bool { return gks[i].String() < gks[j].String() })
}

// Lister finds the live members of an inventory.
type Lister struct {
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
}

// List returns every live object of the given group-kinds in namespace (and cluster
// scope for cluster-scoped kinds) labelled as members of id. A group-kind the cluster
// no longer serves is skipped: it can hold no objects.
func (l *Lister) List(ctx context.Context, namespace, id string, gks []schema.GroupKind) ([]*unstructured.Unstructured, error) {
	return l.list(ctx, namespace, PartOfLabel+"="+id, gks)
}

// ListMembers returns the objects of the kinds gks in namespace ("" is every
// namespace) that belong to any platform's inventory: one list request per kind,
// whatever the number of platforms. PartOf groups them.
func (l *Lister) ListMembers(ctx context.Context, namespace string, gks []schema.GroupKind) ([]*unstructured.Unstructured, error) {
	return l.list(ctx, namespace, PartOfLabel, gks)
}

// PartOf is the inventory id obj belongs to, or "".
func PartOf(obj *unstructured.Unstructured) string {
	return obj.GetLabels()[PartOfLabel]
}

func (l *Lister) list(ctx context.Context, namespace, selector string, gks []schema.GroupKind) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gk := range gks {
		mapping, err := l.Mapper.RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inventory: map %s: %w", gk, err)
		}
		var ri dynamic.ResourceInterface = l.Dynamic.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = l.Dynamic.Resource(mapping.Resource).Namespace(namespace)
		}
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inventory: list %s in %s: %w", gk, namespace, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}
