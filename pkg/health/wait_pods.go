/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// Revision annotations and labels the workload controllers set, to tell a pod of the
// revision being rolled out from one of the revision it replaces.
const (
	deploymentRevisionAnnotation = "deployment.kubernetes.io/revision"
	controllerRevisionHashLabel  = "controller-revision-hash"
)

// CrashLoopError stops a wait early: a pod of the revision being rolled out is crash
// looping, so waiting out the timeout would only delay the same verdict.
type CrashLoopError struct {
	// Workload is the Deployment or StatefulSet the pod belongs to.
	Workload *unstructured.Unstructured
	Pod      string
	Problem  Problem
}

func (e *CrashLoopError) Error() string {
	return fmt.Sprintf("pod %s of the new revision is crash-looping: %s", e.Pod, e.Problem)
}

// PodCreateError stops a wait early: the workload's controller cannot create its pods
// (a ResourceQuota, PodSecurity admission, a webhook...), so no pod will ever become
// ready and there is no pod to explain it.
type PodCreateError struct {
	Workload *unstructured.Unstructured
	Message  string
}

func (e *PodCreateError) Error() string {
	return fmt.Sprintf("its pods cannot be created: %s", e.Message)
}

// podWatch follows the pods of the workloads being waited for: it reports each pod
// problem once as it appears, and fails the wait when a pod of a workload's new
// revision has crash-looped restarts times.
type podWatch struct {
	w         *Waiter
	namespace string
	// workloads by kind/name, with their pod selectors.
	workloads map[string]*unstructured.Unstructured
	selectors map[string]labels.Selector
	onUpdate  func(Update)
	fail      context.CancelCauseFunc

	mu sync.Mutex
	// live is the latest workload seen by the workload watch, for its revision.
	live map[string]*unstructured.Unstructured
	// reported are the (pod, reason) pairs already shown.
	reported map[string]bool
}

func newPodWatch(w *Waiter, namespace string, objs []*unstructured.Unstructured, onUpdate func(Update), fail context.CancelCauseFunc) (*podWatch, error) {
	pw := &podWatch{w: w, namespace: namespace, workloads: map[string]*unstructured.Unstructured{}, selectors: map[string]labels.Selector{},
		onUpdate: onUpdate, fail: fail, live: map[string]*unstructured.Unstructured{}, reported: map[string]bool{}}
	for _, o := range objs {
		if !IsWorkload(o) || o.GetNamespace() != namespace {
			continue
		}
		sel, err := selectorOf(o)
		if err != nil {
			return nil, fmt.Errorf("selector of %s: %w", kube.Ref(o), err)
		}
		pw.workloads[workloadKey(o)] = o
		pw.selectors[workloadKey(o)] = sel
	}
	return pw, nil
}

func workloadKey(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }

// seen records the live state of a workload from the workload watch, and fails the
// wait when a Deployment's new ReplicaSet cannot create pods. The Deployment's own
// ReplicaFailure condition also carries old ReplicaSets' failures (the run may be the
// fix for them), so the new ReplicaSet's condition decides, once the controller has
// seen the Deployment's current spec.
func (pw *podWatch) seen(ctx context.Context, obj *unstructured.Unstructured) {
	pw.mu.Lock()
	pw.live[workloadKey(obj)] = obj
	pw.mu.Unlock()
	if obj.GetKind() != KindDeployment || !observedCurrent(obj) || replicaFailure(obj) == "" {
		return
	}
	if msg := pw.newReplicaSetFailure(ctx, obj); msg != "" {
		pw.fail(&PodCreateError{Workload: pw.workloads[workloadKey(obj)], Message: msg})
	}
}

// replicaFailure is the message of an object's ReplicaFailure condition when it is
// True (Deployments and ReplicaSets both have one).
func replicaFailure(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "ReplicaFailure" && m["status"] == "True" {
			msg, _ := m["message"].(string)
			if msg == "" {
				msg = "ReplicaFailure"
			}
			return msg
		}
	}
	return ""
}

// newReplicaSetFailure is the ReplicaFailure message of the ReplicaSet of a
// Deployment's current revision; "" when it has none (or cannot be read: the plane
// timeout then explains).
func (pw *podWatch) newReplicaSetFailure(ctx context.Context, deployment *unstructured.Unstructured) string {
	sel, err := selectorOf(deployment)
	if err != nil {
		return ""
	}
	list, err := pw.w.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}).
		Namespace(deployment.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return ""
	}
	revision := deployment.GetAnnotations()[deploymentRevisionAnnotation]
	for i := range list.Items {
		rs := &list.Items[i]
		if revision != "" && rs.GetAnnotations()[deploymentRevisionAnnotation] == revision {
			return replicaFailure(rs)
		}
	}
	return ""
}

// observedCurrent reports whether a workload's controller has seen its current spec,
// so its status (revision, conditions) describes that spec.
func observedCurrent(obj *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return observed >= obj.GetGeneration()
}

// run watches the namespace's pods, and the events of pods that could not be created,
// until ctx ends.
func (pw *podWatch) run(ctx context.Context) {
	if len(pw.workloads) == 0 {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { pw.watchFailedCreates(ctx) })
	ri := pw.w.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(pw.namespace)
	_, _ = watchtools.UntilWithSync(ctx, kube.ListWatch(ri, ""), &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod); err != nil {
			return false, nil
		}
		pw.check(ctx, &pod)
		return false, nil
	})
}

// check reports the problems of one pod and fails the wait on a crash loop of a new
// revision's pod.
func (pw *podWatch) check(ctx context.Context, pod *corev1.Pod) {
	workload := pw.ownerOf(pod)
	if workload == nil {
		return
	}
	for _, problem := range PodProblems(pod) {
		if problem.Reason == "NotReady" {
			continue // the workload's own message says as much
		}
		key := pod.Name + "/" + problem.Reason
		pw.mu.Lock()
		first := !pw.reported[key]
		pw.reported[key] = true
		pw.mu.Unlock()
		if first && pw.onUpdate != nil {
			pw.onUpdate(Update{Object: workload, Message: fmt.Sprintf("pod %s %s", pod.Name, problem)})
		}
		if problem.Reason == "CrashLoopBackOff" && pw.w.CrashLoopRestarts > 0 && maxRestarts(pod) >= pw.w.CrashLoopRestarts && pw.isNewRevision(ctx, workload, pod) {
			pw.fail(&CrashLoopError{Workload: workload, Pod: pod.Name, Problem: problem})
		}
	}
}

func (pw *podWatch) ownerOf(pod *corev1.Pod) *unstructured.Unstructured {
	set := labels.Set(pod.Labels)
	for k, sel := range pw.selectors {
		if !sel.Empty() && sel.Matches(set) {
			return pw.workloads[k]
		}
	}
	return nil
}

func maxRestarts(pod *corev1.Pod) int32 {
	var n int32
	for _, cs := range pod.Status.ContainerStatuses {
		n = max(n, cs.RestartCount)
	}
	return n
}

// isNewRevision reports whether pod runs the revision its workload is rolling out: a
// crash loop of an old pod says nothing about the change being applied.
func (pw *podWatch) isNewRevision(ctx context.Context, workload *unstructured.Unstructured, pod *corev1.Pod) bool {
	pw.mu.Lock()
	live := pw.live[workloadKey(workload)]
	pw.mu.Unlock()
	// Until the controller has seen the current spec, its revision is the previous
	// one, and that revision's pods are not the change being applied.
	if live == nil || !observedCurrent(live) {
		return false
	}
	switch workload.GetKind() {
	case KindStatefulSet:
		update, _, _ := unstructured.NestedString(live.Object, "status", "updateRevision")
		return update != "" && pod.Labels[controllerRevisionHashLabel] == update
	case KindDeployment:
		want := live.GetAnnotations()[deploymentRevisionAnnotation]
		for _, ref := range pod.OwnerReferences {
			if ref.Kind != "ReplicaSet" {
				continue
			}
			rs, err := pw.w.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}).
				Namespace(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			return want != "" && rs.GetAnnotations()[deploymentRevisionAnnotation] == want
		}
	}
	return false
}

// watchFailedCreates fails the wait when a StatefulSet's controller reports, by a new
// FailedCreate event, that it cannot create a pod. A StatefulSet has no condition for
// it; events that were there before the wait began are an earlier run's.
func (pw *podWatch) watchFailedCreates(ctx context.Context) {
	ri := pw.w.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(pw.namespace)
	before := map[string]int64{}
	synced := false
	precondition := func(store cache.Store) (bool, error) {
		for _, item := range store.List() {
			if u, ok := item.(*unstructured.Unstructured); ok {
				count, _, _ := unstructured.NestedInt64(u.Object, "count")
				before[u.GetName()] = count
			}
		}
		synced = true
		return false, nil
	}
	_, _ = kube.UntilWithSync(ctx, kube.ListWatch(ri, "reason=FailedCreate,involvedObject.kind=StatefulSet"), &unstructured.Unstructured{}, precondition, func(ev watch.Event) (bool, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || !synced || ev.Type == watch.Deleted {
			return false, nil
		}
		count, _, _ := unstructured.NestedInt64(u.Object, "count")
		if seen, ok := before[u.GetName()]; ok && count <= seen {
			return false, nil
		}
		name, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
		workload := pw.workloads[KindStatefulSet+"/"+name]
		if workload == nil {
			return false, nil
		}
		msg, _, _ := unstructured.NestedString(u.Object, "message")
		pw.fail(&PodCreateError{Workload: workload, Message: msg})
		return false, nil
	})
}
