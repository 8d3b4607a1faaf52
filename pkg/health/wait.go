/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// Update reports a change in one workload's readiness while waiting.
type Update struct {
	Object  *unstructured.Unstructured
	Ready   bool
	Message string
}

// NotReadyError lists the workloads that were not ready when a wait ended.
type NotReadyError struct {
	// Objects are the workloads still not ready, with kstatus's message.
	Objects []*unstructured.Unstructured
	Reasons map[string]string
	Cause   error
}

func (e *NotReadyError) Error() string {
	var parts []string
	for _, o := range e.Objects {
		parts = append(parts, fmt.Sprintf("%s %s/%s: %s", o.GetKind(), o.GetNamespace(), o.GetName(), e.Reasons[o.GetName()+"/"+o.GetKind()]))
	}
	return fmt.Sprintf("not ready: %s", strings.Join(parts, "; "))
}

func (e *NotReadyError) Unwrap() error { return e.Cause }

// FailedError stops a wait early: kstatus says a workload failed for good (a
// Deployment past its progressDeadlineSeconds).
type FailedError struct {
	Workload *unstructured.Unstructured
	Message  string
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%s %s failed: %s", e.Workload.GetKind(), e.Workload.GetName(), e.Message)
}

// Waiter waits for workloads with watches (an informer-backed list+watch per kind),
// never by sleeping.
type Waiter struct {
	Dynamic dynamic.Interface
	// Check decides whether a live workload is ready; the package's Check (kstatus)
	// when nil. status passes a stricter one that also compares with the spec.
	Check func(*unstructured.Unstructured) Ready
	// WatchPods also follows the workloads' pods: each pod problem (Unschedulable,
	// CrashLoopBackOff, ImagePullBackOff, OOMKilled...) is reported as it appears.
	WatchPods bool
	// CrashLoopRestarts, with WatchPods, ends the wait with a *CrashLoopError once a
	// pod of a workload's new revision has crash-looped this many times; 0 never.
	CrashLoopRestarts int32
}

// Wait blocks until every workload in objs (Deployments and StatefulSets) is ready and
// every Job has completed (other kinds are ignored), ctx ends, or ctx's deadline passes. onUpdate, when not nil,
// hears every readiness change. On timeout it returns a *NotReadyError.
func (w *Waiter) Wait(ctx context.Context, objs []*unstructured.Unstructured, resourceOf func(*unstructured.Unstructured) (schema.GroupVersionResource, error), onUpdate func(Update)) error {
	type key struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	ctx, fail := context.WithCancelCause(ctx)
	pods := map[string]*podWatch{}
	var podsDone sync.WaitGroup
	// The pod watches stop when the wait does, before it returns, so no update comes
	// after it.
	defer func() { fail(nil); podsDone.Wait() }()
	groups := map[key]map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if !IsWaitedFor(o) {
			continue
		}
		gvr, err := resourceOf(o)
		if err != nil {
			return err
		}
		k := key{gvr, o.GetNamespace()}
		if w.WatchPods && IsWorkload(o) && pods[o.GetNamespace()] == nil {
			pw, err := newPodWatch(w, o.GetNamespace(), objs, onUpdate, fail)
			if err != nil {
				return err
			}
			pods[o.GetNamespace()] = pw
			podsDone.Go(func() { pw.run(ctx) })
		}
		if groups[k] == nil {
			groups[k] = map[string]*unstructured.Unstructured{}
		}
		groups[k][o.GetName()] = o
	}
	var (
		mu       sync.Mutex
		pending  = map[string]*unstructured.Unstructured{}
		messages = map[string]string{}
		wg       sync.WaitGroup
		errs     []error
	)
	for k, names := range groups {
		for n, o := range names {
			pending[n+"/"+o.GetKind()] = o
			messages[n+"/"+o.GetKind()] = "not observed yet"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ri := w.Dynamic.Resource(k.gvr).Namespace(k.ns)
			lw := kube.ListWatch(ri, "")
			ready := map[string]bool{}
			_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || names[obj.GetName()] == nil {
					return len(ready) == len(names), nil
				}
				id := obj.GetName() + "/" + obj.GetKind()
				// A Job's pods are not followed: one that retries while what it
				// sets up starts is not a crash loop of a new revision, and its
				// failure is the Job's own (backoffLimit), which kstatus reports.
				if pw := pods[k.ns]; pw != nil && IsWorkload(obj) {
					pw.seen(ctx, obj)
				}
				r := w.check(obj)
				if ev.Type == watch.Deleted {
					r = Ready{Message: "deleted"}
				}
				if r.Failed {
					fail(&FailedError{Workload: obj, Message: r.Message})
				}
				mu.Lock()
				changed := ready[obj.GetName()] != r.Ready || messages[id] != r.Message
				messages[id] = r.Message
				if r.Ready {
					ready[obj.GetName()] = true
					delete(pending, id)
				} else {
					delete(ready, obj.GetName())
					pending[id] = obj
				}
				mu.Unlock()
				if changed && onUpdate != nil {
					onUpdate(Update{Object: obj, Ready: r.Ready, Message: r.Message})
				}
				return len(ready) == len(names), nil
			})
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(pending) == 0 {
		return nil
	}
	var crash *CrashLoopError
	if errors.As(context.Cause(ctx), &crash) {
		return crash
	}
	var create *PodCreateError
	if errors.As(context.Cause(ctx), &create) {
		return create
	}
	var failed *FailedError
	if errors.As(context.Cause(ctx), &failed) {
		return failed
	}
	nr := &NotReadyError{Reasons: messages, Cause: errors.Join(errs...)}
	for _, o := range pending {
		nr.Objects = append(nr.Objects, o)
	}
	sort.Slice(nr.Objects, func(i, j int) bool { return nr.Objects[i].GetName() < nr.Objects[j].GetName() })
	if nr.Cause == nil {
		nr.Cause = context.DeadlineExceeded
	}
	return nr
}

func (w *Waiter) check(obj *unstructured.Unstructured) Ready {
	if w.Check != nil {
		return w.Check(obj)
	}
	return Check(obj)
}
