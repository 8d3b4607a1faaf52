/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// SharedLists are the live objects of the platforms of one run (plan or apply of a
// directory), read once for all of them: one LIST per kind across the cluster,
// selected by their inventory labels, instead of one per kind and platform. A fleet
// of 100 unchanged tenants then costs a dozen requests to plan, not 1,300.
//
// What a list cannot prove is read as before, per platform: a kind whose
// cluster-wide LIST RBAC forbids (a ServiceAccount confined to some namespaces) is
// listed per namespace; a namespace or CRD the list did not find is read by GET; a
// kind whose rendered objects are not all in the shared list (a first install, an
// object without the platform's label) is listed whole in the platform's namespace,
// so nothing unlabelled is taken for absent. The lists are read when the first
// platform needs them: a platform planned later in a long run compares against what
// they held then, which only its own run (its own namespace) changes.
type SharedLists struct {
	clients *kube.Clients
	// members selects the platforms' objects; parents their OntoPlatforms.
	members, parents string

	mu        sync.Mutex
	resources map[schema.GroupVersionResource]*sharedList
	crdOnce   sync.Once
	crd       *unstructured.Unstructured
}

// sharedList is one resource's cluster-wide list, by namespace.
type sharedList struct {
	once sync.Once
	// ok is false when the list could not be read (forbidden): planners list per
	// namespace instead.
	ok   bool
	byNS map[string][]*unstructured.Unstructured
	err  error
}

// NewSharedLists returns the shared lists of the platforms whose inventory ids are
// ids (inventory.ID of each platform's namespace and name).
func NewSharedLists(clients *kube.Clients, ids []string) *SharedLists {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	selector := func(key string) string {
		r, err := labels.NewRequirement(key, selection.In, ids)
		if err != nil {
			return "" // not reached: inventory ids are valid label values
		}
		return labels.NewSelector().Add(*r).String()
	}
	return &SharedLists{clients: clients, members: selector(inventory.PartOfLabel), parents: selector(inventory.IDLabel),
		resources: map[schema.GroupVersionResource]*sharedList{}}
}

// list returns the run's live objects of mapping's resource in namespace, and
// whether the shared list holds that resource at all.
func (s *SharedLists) list(ctx context.Context, mapping *meta.RESTMapping, namespace string) ([]*unstructured.Unstructured, bool, error) {
	if s == nil || s.members == "" {
		return nil, false, nil
	}
	s.mu.Lock()
	l := s.resources[mapping.Resource]
	if l == nil {
		l = &sharedList{}
		s.resources[mapping.Resource] = l
	}
	s.mu.Unlock()
	l.once.Do(func() {
		selector := s.members
		if mapping.GroupVersionKind.GroupKind() == v1alpha1.GroupVersionKind.GroupKind() {
			// The parents carry the id label, not part-of: they are not members.
			selector = s.parents
		}
		list, err := s.clients.List(ctx, mapping.Resource, "", selector)
		switch {
		case apierrors.IsForbidden(err):
			return // per namespace, as without shared lists
		case err != nil:
			l.err = err
			return
		}
		l.ok, l.byNS = true, map[string][]*unstructured.Unstructured{}
		for i := range list.Items {
			o := &list.Items[i]
			key := o.GetNamespace()
			if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
				key = o.GetName() // cluster-scoped (Namespaces): by name
			}
			l.byNS[key] = append(l.byNS[key], o)
		}
	})
	if l.err != nil {
		return nil, false, l.err
	}
	if !l.ok {
		return nil, false, nil
	}
	return l.byNS[namespace], true, nil
}

// get returns obj's live copy when the shared lists know it: a Namespace of the
// run's platforms, or the CRD, read once with read for all of them. false: read it as
// usual.
func (s *SharedLists) get(ctx context.Context, mapping *meta.RESTMapping, obj *unstructured.Unstructured, read func() (*unstructured.Unstructured, error)) (*unstructured.Unstructured, bool, error) {
	if s == nil {
		return nil, false, nil
	}
	switch gk := mapping.GroupVersionKind.GroupKind(); {
	case gk == schema.GroupKind{Kind: "Namespace"}:
		items, ok, err := s.list(ctx, mapping, obj.GetName())
		if err != nil || !ok || len(items) == 0 {
			return nil, false, err // not labelled yet, or not there: a GET says which
		}
		return items[0], true, nil
	case gk.Kind == "CustomResourceDefinition" && obj.GetName() == v1alpha1.CRDName:
		var err error
		s.crdOnce.Do(func() { s.crd, err = read() })
		if s.crd == nil {
			// Missing (an earlier platform's apply may create it) or not read: each
			// planner reads it again.
			return nil, false, err
		}
		return s.crd, true, nil
	}
	return nil, false, nil
}

// covers reports whether items hold every object of d of kind gk in namespace ns:
// only then is the shared list as good as a whole list of the namespace.
func covers(d *Desired, gk schema.GroupKind, ns string, items []*unstructured.Unstructured) bool {
	have := make(map[string]bool, len(items))
	for _, o := range items {
		have[o.GetName()] = true
	}
	for _, o := range d.Objects() {
		if o.GroupVersionKind().GroupKind() == gk && o.GetNamespace() == ns && !have[o.GetName()] {
			return false
		}
	}
	if gk == v1alpha1.GroupVersionKind.GroupKind() && d.Platform != nil && d.Platform.GetNamespace() == ns {
		return have[d.Platform.GetName()]
	}
	return true
}

// LivePlatform is the installed OntoPlatform namespace/name, nil when there is none:
// from shared's list when it holds it (shared may be nil), else one GET.
func LivePlatform(ctx context.Context, clients *kube.Clients, shared *SharedLists, namespace, name string) (*v1alpha1.OntoPlatform, error) {
	obj, ok, err := shared.Platform(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		l := &inventory.Lister{Dynamic: clients.Dynamic, Mapper: clients.Mapper}
		obj, err = l.Parent(ctx, namespace, name)
		var notFound *inventory.NotFoundError
		if errors.As(err, &notFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	var live v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &live); err != nil {
		return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return &live, nil
}

// Platform returns the live OntoPlatform namespace/name from the run's shared list
// of them; false when the list does not hold it (not installed, or not listable
// cluster-wide): read it as usual.
func (s *SharedLists) Platform(ctx context.Context, namespace, name string) (*unstructured.Unstructured, bool, error) {
	if s == nil {
		return nil, false, nil
	}
	mapping, err := s.clients.Mapper.RESTMapping(v1alpha1.GroupVersionKind.GroupKind(), v1alpha1.GroupVersionKind.Version)
	if err != nil {
		return nil, false, nil // the CRD is not served yet: nothing installed
	}
	items, ok, err := s.list(ctx, mapping, namespace)
	if err != nil || !ok {
		return nil, false, err
	}
	for _, o := range items {
		if o.GetName() == name {
			return o, true, nil
		}
	}
	return nil, false, nil
}
