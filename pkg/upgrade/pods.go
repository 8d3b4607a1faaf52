/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// observeTimeout bounds the wait for a workload controller to observe a new
// generation: seconds on a healthy cluster.
const observeTimeout = 30 * time.Second

// crashLoopWindow is how long a new pod is watched after it is ready when no soak
// is asked for: with --canary-soak 0 and minReadySeconds 0, a container that exits
// seconds after it starts was Ready, every wait passed, and the next components moved
// before anything saw the crash. minReadySeconds counts towards the window (render
// gives workloads 10 s by default, so the window only costs time when a platform
// sets it lower).
const crashLoopWindow = 10 * time.Second

// soakDuration is how long soak watches a pod of a workload whose minReadySeconds is
// minReady: the canary soak, or when that is 0, what is left of one crash-loop window.
func soakDuration(canarySoak time.Duration, minReady int64) (d time.Duration, window bool) {
	if canarySoak > 0 {
		return canarySoak, false
	}
	return max(crashLoopWindow-time.Duration(minReady)*time.Second, 0), true
}

// minReadySeconds is workload w's spec.minReadySeconds (0 when unset).
func minReadySeconds(w *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(w.Object, "spec", "minReadySeconds")
	return n
}

// SoakError says how a canary failed while it was watched.
type SoakError struct {
	Pod    string
	Reason string
}

func (e *SoakError) Error() string { return fmt.Sprintf("pod %s: %s", e.Pod, e.Reason) }

// canarySelector is the label selector of canary Deployment c's pods.
func canarySelector(c *unstructured.Unstructured) string {
	sel, _, _ := unstructured.NestedStringMap(c.Object, "spec", "selector", "matchLabels")
	return labels.SelectorFromSet(sel).String()
}

// soak watches the pods selector picks (a label selector, or "metadata.name=NAME" for
// one pod) of workload w for CanarySoak: each must stay ready, without a restart and
// without a pod problem (CrashLoopBackOff, OOMKilled, ImagePullBackOff, Unschedulable).
// Pods are watched, not polled, so a problem fails the soak when it happens. A soak of
// 0 still watches one crash-loop window, less w's minReadySeconds.
func (r *run) soak(ctx context.Context, component string, w *unstructured.Unstructured, name, selector string) error {
	d, window := soakDuration(r.u.Options.CanarySoak, minReadySeconds(w))
	if d <= 0 {
		return nil
	}
	if window {
		r.emit(component, fmt.Sprintf("%s ready; watching it for %s for a crash at start (--canary-soak 0: one %s crash-loop window, less minReadySeconds)", name, d, crashLoopWindow))
	} else {
		r.emit(component, fmt.Sprintf("%s ready; watching it for %s (restarts, crashes, OOM kills)", name, d))
	}
	opts := metav1.ListOptions{}
	if field, ok := strings.CutPrefix(selector, "metadata.name="); ok {
		opts.FieldSelector = "metadata.name=" + field
	} else {
		opts.LabelSelector = selector
	}
	pods := r.u.Clients.Kube.CoreV1().Pods(r.u.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector, o.FieldSelector = opts.LabelSelector, opts.FieldSelector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector, o.FieldSelector = opts.LabelSelector, opts.FieldSelector
			return pods.Watch(ctx, o)
		},
	}
	restarts := map[string]int32{}
	soakCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var failure error
	_, err := watchtools.UntilWithSync(soakCtx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			failure = &SoakError{Pod: pod.Name, Reason: "deleted while it was watched"}
			return true, nil
		}
		n := restartCount(pod)
		if before, seen := restarts[pod.Name]; seen && n > before {
			failure = &SoakError{Pod: pod.Name, Reason: fmt.Sprintf("restarted (%d restarts)%s", n, lastExit(pod))}
			return true, nil
		} else if !seen {
			restarts[pod.Name] = n
		}
		if ps := health.PodProblems(pod); len(ps) > 0 {
			failure = &SoakError{Pod: pod.Name, Reason: ps[0].String()}
			return true, nil
		}
		return false, nil
	})
	if failure != nil {
		return fmt.Errorf("soak: %w", failure)
	}
	if err != nil && ctx.Err() == nil && errors.Is(soakCtx.Err(), context.DeadlineExceeded) {
		return nil // watched for the whole soak: healthy
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("soak %s: %w", name, err)
}

// waitTerminated waits, by watch, until no pod of Deployment dep's selector is
// terminating (a terminating pod still holds its resources), for at most timeout.
func (r *run) waitTerminated(ctx context.Context, dep *unstructured.Unstructured, timeout time.Duration) error {
	selector := canarySelector(dep) // any Deployment's matchLabels
	pods := r.u.Clients.Kube.CoreV1().Pods(r.u.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return pods.Watch(ctx, o)
		},
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	terminating := map[string]bool{}
	_, err := kube.UntilWithSync(wctx, lw, &corev1.Pod{}, func(store cache.Store) (bool, error) {
		for _, o := range store.List() {
			if p, ok := o.(*corev1.Pod); ok && p.DeletionTimestamp != nil {
				terminating[p.Name] = true
			}
		}
		return len(terminating) == 0, nil
	}, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted || p.DeletionTimestamp == nil {
			delete(terminating, p.Name)
		} else {
			terminating[p.Name] = true
		}
		return len(terminating) == 0, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("pods of %s still terminating after %s: %w", dep.GetName(), timeout, err)
	}
	return nil
}

func restartCount(pod *corev1.Pod) int32 {
	var n int32
	for _, cs := range pod.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

func lastExit(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.LastTerminationState.Terminated; t != nil {
			return fmt.Sprintf(", container %s last exit %s/%d", cs.Name, t.Reason, t.ExitCode)
		}
	}
	return ""
}

// deleteCanaries deletes every canary Deployment of this platform (a stopped run's
// leftovers).
func (r *run) deleteCanaries(ctx context.Context) error { return r.deleteCanariesOf(ctx, "") }

// deleteCanariesOf deletes the canary Deployments of component c ("" for all).
func (r *run) deleteCanariesOf(ctx context.Context, c string) error {
	sel := labels.Set{TrackLabel: TrackCanary, inventory.PartOfLabel: r.from.InventoryID}
	if c != "" {
		sel[v1alpha1.LabelName] = c
	}
	deps := r.u.Clients.Kube.AppsV1().Deployments(r.u.Namespace)
	list, err := deps.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("list canaries: %w", err)
	}
	for _, d := range list.Items {
		if err := ignoreNotFound(deps.Delete(ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})); err != nil {
			return fmt.Errorf("delete canary %s: %w", d.Name, err)
		}
		r.emit(d.Labels[v1alpha1.LabelName], "canary "+d.Name+" deleted")
	}
	return nil
}

func (r *run) deleteObject(ctx context.Context, o *unstructured.Unstructured) error {
	ri, err := r.u.Clients.Resource(o)
	if err != nil {
		return err
	}
	err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}

// deleteBrokenPods deletes the pods of StatefulSet sts that are not on the revision
// of its (reverted) template and are not healthy, so the controller recreates them
// from that template: under OrderedReady it would otherwise wait for them forever.
//
// The revision to keep is status.updateRevision once the controller has observed
// the reverted template, not status.currentRevision: after a rollout that reached
// every pod, currentRevision is the failed revision itself.
func (r *run) deleteBrokenPods(ctx context.Context, sts *unstructured.Unstructured) error {
	sets := r.u.Clients.Kube.AppsV1().StatefulSets(r.u.Namespace)
	var live *appsv1.StatefulSet
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, observeTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		live, err = sets.Get(ctx, sts.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return live.Status.ObservedGeneration >= live.Generation && live.Status.UpdateRevision != "", nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("StatefulSet %s: the controller did not observe the returned template: %w", sts.GetName(), err)
	}
	sel, err := metav1.LabelSelectorAsSelector(live.Spec.Selector)
	if err != nil {
		return err
	}
	pods, err := r.u.Clients.Kube.CoreV1().Pods(r.u.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		rev := p.Labels[appsv1.StatefulSetRevisionLabel]
		// A crash-looping pod is Ready between two crashes: its restarts count too.
		healthy := health.PodReady(&p) && restartCount(&p) == 0 && len(health.PodProblems(&p)) == 0
		if rev == "" || rev == live.Status.UpdateRevision || p.DeletionTimestamp != nil || healthy {
			continue
		}
		if err := ignoreNotFound(r.u.Clients.Kube.CoreV1().Pods(r.u.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete broken pod %s: %w", p.Name, err)
		}
		r.emit(health.ComponentName(sts), fmt.Sprintf("deleted pod %s of the failed revision (not healthy); its volume is kept", p.Name))
	}
	return nil
}

// runsTarget reports whether every workload of component c runs the target's
// version label: the pod template's, which is the platform version for a platform
// service and the image's own version for infrastructure (so a release that keeps an
// infrastructure image finds it already moved).
func (r *run) runsTarget(ctx context.Context, c string) bool {
	for _, w := range workloadsOf(r.to, c) {
		ri, err := r.u.Clients.Resource(w)
		if err != nil {
			return false
		}
		live, err := ri.Get(ctx, w.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		want, _, _ := unstructured.NestedString(w.Object, "spec", "template", "metadata", "labels", v1alpha1.LabelVersion)
		got, _, _ := unstructured.NestedString(live.Object, "spec", "template", "metadata", "labels", v1alpha1.LabelVersion)
		if want != got {
			return false
		}
	}
	return true
}
