/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

// stageWatch is what the steps of one uninstall stage wait on: one informer per
// resource and namespace any of them waits for, pods included, shared by the steps.
// Each step of the service stage used to open its own list+watch of each kind: 35 of
// them for the production example, whose lists then queued behind the stage's deletes
// at the API server (docs/benchmarks.md). A step still waits for, and
// reports, its own objects and pods only.
type stageWatch struct {
	clients *kube.Clients
	// ctx runs the informers and the pod deletes; stop ends it.
	ctx     context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup
	deletes errgroup.Group

	mu        sync.Mutex
	resources map[string]*watchedResource
	// changed is closed, and replaced, on every event of any informer.
	changed chan struct{}
	// owners are the workloads this run deleted: their pods are deleted at once.
	owners    map[types.UID]bool
	requested map[types.UID]bool
}

// watchedResource is one informer's store and whether its first list is in.
type watchedResource struct {
	store  cache.Store
	synced cache.DoneChecker
	ri     dynamic.ResourceInterface
}

func newStageWatch(ctx context.Context, clients *kube.Clients) *stageWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &stageWatch{clients: clients, ctx: ctx, cancel: cancel, resources: map[string]*watchedResource{},
		changed: make(chan struct{}), owners: map[types.UID]bool{}, requested: map[types.UID]bool{}}
	w.deletes.SetLimit(plan.DefaultConcurrency)
	return w
}

// stop ends the informers and waits for them and for the pod deletes sent.
func (w *stageWatch) stop() {
	w.cancel()
	w.running.Wait()
	_ = w.deletes.Wait()
}

// resource returns the informer of gvr in ns (cluster-wide when empty), narrowed by
// fieldSelector (empty: everything), starting it on first use.
func (w *stageWatch) resource(gvr schema.GroupVersionResource, ns, fieldSelector string) *watchedResource {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := gvr.String() + "/" + ns + "?" + fieldSelector
	if r := w.resources[key]; r != nil {
		return r
	}
	var ri dynamic.ResourceInterface = w.clients.Dynamic.Resource(gvr)
	if ns != "" {
		ri = w.clients.Dynamic.Resource(gvr).Namespace(ns)
	}
	r := &watchedResource{ri: ri}
	pods := gvr == podsResource
	seen := func(obj any) {
		if pods {
			w.deletePod(r, obj)
		}
		w.notify()
	}
	// Pods are followed by their metadata, which is all a wait looks at (owners,
	// labels, deletion), in protobuf: decoding whole pods as JSON from the watch, each
	// changed 3-4 times as it goes, was 45% of an uninstall's CPU on a 2-core machine
	// it shares with the API server.
	var lw cache.ListerWatcher = kube.ListWatch(ri, fieldSelector)
	var objType runtime.Object = &unstructured.Unstructured{}
	if pods {
		lw, objType = kube.MetadataListWatch(w.clients.Metadata.Resource(gvr).Namespace(ns), fieldSelector), &metav1.PartialObjectMetadata{}
	}
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    objType,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    seen,
			UpdateFunc: func(_, obj any) { seen(obj) },
			DeleteFunc: func(any) { w.notify() },
		},
	})
	r.store, r.synced = store, informer.HasSyncedChecker()
	w.resources[key] = r
	w.running.Add(1)
	go func() {
		defer w.running.Done()
		informer.RunWithContext(w.ctx)
	}()
	return r
}

func (w *stageWatch) notify() {
	w.mu.Lock()
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// changes is the channel the next event closes.
func (w *stageWatch) changes() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// deletePod deletes obj when a workload this run deleted controls it. The garbage
// collector reaches a deleted owner's pods late and one owner after another
// (docs/benchmarks.md). Each delete is on condition it is that very pod (UID);
// one already gone, or replaced, is not this run's to delete, and the wait still sees
// every pod go. The pods an interrupted run left (orphanedPods) are only waited for.
func (w *stageWatch) deletePod(r *watchedResource, obj any) {
	pod, ok := obj.(metav1.Object)
	if !ok || pod.GetDeletionTimestamp() != nil {
		return
	}
	w.mu.Lock()
	if w.requested[pod.GetUID()] || !controlledBy(pod, w.owners) {
		w.mu.Unlock()
		return
	}
	w.requested[pod.GetUID()] = true
	w.mu.Unlock()
	name, uid := pod.GetName(), pod.GetUID()
	w.deletes.Go(func() error {
		_ = r.ri.Delete(w.ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		return nil
	})
}

// own adds the workloads whose deletes were accepted to those whose pods go at once,
// starts following their namespaces' pods, and deletes those of their pods already
// seen. Only accepted deletes: a live ReplicaSet would make the pods again.
func (w *stageWatch) own(owners map[string]map[types.UID]bool) {
	w.mu.Lock()
	for _, uids := range owners {
		for uid := range uids {
			w.owners[uid] = true
		}
	}
	w.mu.Unlock()
	for ns := range owners {
		r := w.resource(podsResource, ns, "")
		for _, obj := range r.store.List() {
			w.deletePod(r, obj)
		}
	}
}

// waitedObject is an object a step waits to see go.
type waitedObject struct {
	r        *watchedResource
	key      string
	uid      types.UID
	resource string
	name     string
}

// waitGone waits until none of objs exists any more (an object of the same name with
// another UID counts as gone) and no pod is left, in owners' namespaces, whose
// controller is one of owners (podOwners) or that orphaned (may be nil) accepts; the
// caller gives owners to own first, so their pods are deleted, not only waited for.
// A pod is known by its owner, not by labels alone, so the pods of other workloads
// with the same labels (a migration Job's, another tool's) are not waited for.
func (w *stageWatch) waitGone(ctx context.Context, objs []*unstructured.Unstructured, owners map[string]map[types.UID]bool, orphaned func(metav1.Object) bool) error {
	var waited []waitedObject
	for _, o := range objs {
		m, err := w.clients.Mapping(o)
		if err != nil {
			return err
		}
		// A namespaced object shares its kind's informer with the stage's others; a
		// cluster-scoped one (the namespace) is watched alone, not with the cluster's.
		ns, key, selector := "", o.GetName(), "metadata.name="+o.GetName()
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns, key, selector = o.GetNamespace(), o.GetNamespace()+"/"+o.GetName(), ""
		}
		waited = append(waited, waitedObject{r: w.resource(m.Resource, ns, selector), key: key, uid: o.GetUID(), resource: m.Resource.Resource, name: o.GetName()})
	}
	pods := map[string]*watchedResource{}
	for ns := range owners {
		pods[ns] = w.resource(podsResource, ns, "")
	}
	for _, o := range waited {
		if !cache.WaitFor(ctx, "", o.r.synced) {
			return fmt.Errorf("list %s before the watch: %w", o.resource, ctx.Err())
		}
	}
	for _, r := range pods {
		if !cache.WaitFor(ctx, "", r.synced) {
			return fmt.Errorf("list pods before the watch: %w", ctx.Err())
		}
	}
	for {
		// Taken before the look, so an event during it is not missed.
		next := w.changes()
		objsLeft := map[string][]string{}
		for _, o := range waited {
			item, exists, err := o.r.store.GetByKey(o.key)
			if err != nil {
				return err
			}
			if u, ok := item.(*unstructured.Unstructured); exists && ok && (o.uid == "" || u.GetUID() == o.uid) {
				objsLeft[o.resource] = append(objsLeft[o.resource], o.name)
			}
		}
		podsLeft := map[string][]string{}
		for ns, r := range pods {
			uids := owners[ns]
			for _, item := range r.store.List() {
				if pod, ok := item.(metav1.Object); ok && (controlledBy(pod, uids) || (orphaned != nil && orphaned(pod))) {
					podsLeft[ns] = append(podsLeft[ns], pod.GetName())
				}
			}
		}
		if len(objsLeft) == 0 && len(podsLeft) == 0 {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return goneError(objsLeft, podsLeft, ctx.Err())
		}
	}
}

// goneError says what is still there when a wait ends: the objects by resource, and
// the pods by namespace, the first 3 of each by name.
func goneError(objsLeft, podsLeft map[string][]string, err error) error {
	names := func(names []string) string {
		sort.Strings(names)
		if len(names) > 3 {
			return fmt.Sprintf("%v and %d more", names[:3], len(names)-3)
		}
		return fmt.Sprint(names)
	}
	var parts []string
	for resource, left := range objsLeft {
		parts = append(parts, fmt.Sprintf("%s %s still present", resource, names(left)))
	}
	for ns, left := range podsLeft {
		parts = append(parts, fmt.Sprintf("pods %s of the deleted workloads still present in %s", names(left), ns))
	}
	sort.Strings(parts)
	return fmt.Errorf("%s: %w", strings.Join(parts, "; "), err)
}
