/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// LiveSource reads the live objects a plan compares with: the API server (APISource,
// the CLI's) or a cache of it (the watch's, which keeps its informers' copies). With
// a cache, the planner takes from it which objects exist and which are unchanged
// (Planner.Unchanged), and reads from the API server the few it dry-runs, and those
// the cache does not hold (it may keep only the platforms' members).
type LiveSource interface {
	// Get returns the live object of mapping's resource named name, in namespace
	// (empty for a cluster-scoped kind); nil, nil when it does not exist.
	Get(ctx context.Context, mapping *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the live objects of mapping's resource in namespace (every
	// namespace when empty) that match the label selector (everything when empty).
	List(ctx context.Context, mapping *meta.RESTMapping, namespace, selector string) ([]*unstructured.Unstructured, error)
}

// APISource reads from the API server: one request per Get or List.
type APISource struct{ Clients *kube.Clients }

// Get reads one object.
func (s APISource) Get(ctx context.Context, mapping *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error) {
	ri := s.Clients.Dynamic.Resource(mapping.Resource)
	var o *unstructured.Unstructured
	var err error
	if namespace != "" {
		o, err = ri.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	} else {
		o, err = ri.Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return o, err
}

// List lists one resource.
func (s APISource) List(ctx context.Context, mapping *meta.RESTMapping, namespace, selector string) ([]*unstructured.Unstructured, error) {
	list, err := s.Clients.List(ctx, mapping.Resource, namespace, selector)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// fromAPI reads obj from the API server, when Live is a cache: for an object the
// cache does not hold (nil when the API server has none either), and for one that is
// dry-run, whose diff is made against the object as the API server has it
// (managedFields included, and none of a typed round trip's zero values).
func (pl *Planner) fromAPI(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return pl.getFrom(ctx, APISource{Clients: pl.Clients}, obj)
}

// getFrom reads obj from src; nil when it does not exist.
func (pl *Planner) getFrom(ctx context.Context, src LiveSource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	m, err := pl.Clients.Mapping(obj)
	if err != nil {
		return nil, err
	}
	ns := ""
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns = obj.GetNamespace()
	}
	return src.Get(ctx, m, ns, obj.GetName())
}

// live is the planner's source: Live, else the API server.
func (pl *Planner) live() LiveSource {
	if pl.Live != nil {
		return pl.Live
	}
	return APISource{Clients: pl.Clients}
}

// Lists are the whole lists of kinds in one namespace that a plan read: what each
// resource held in that namespace at the time. Safe for concurrent use.
type Lists struct {
	mu    sync.Mutex
	lists map[string]map[string]*unstructured.Unstructured // resource/namespace → name → object
}

func listsKey(resource schema.GroupVersionResource, namespace string) string {
	return resource.String() + "/" + namespace
}

// keep records items as the whole of resource in namespace; nothing on a nil Lists.
func (l *Lists) keep(resource schema.GroupVersionResource, namespace string, items []*unstructured.Unstructured) {
	if l == nil {
		return
	}
	byName := make(map[string]*unstructured.Unstructured, len(items))
	for _, o := range items {
		byName[o.GetName()] = o
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lists == nil {
		l.lists = map[string]map[string]*unstructured.Unstructured{}
	}
	l.lists[listsKey(resource, namespace)] = byName
}

// Find returns the object named name of resource in namespace as the plan's list of
// it held it: nil, true when the list did not hold it (it did not exist); false when
// the plan did not list that resource in that namespace whole.
func (l *Lists) Find(resource schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	if l == nil {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	byName, ok := l.lists[listsKey(resource, namespace)]
	if !ok {
		return nil, false
	}
	return byName[name], true
}
