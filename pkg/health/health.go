/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package health decides whether a platform's workloads are ready, waits for them with
// watches, and explains why one is not (pods pending and why, crash loops, image pulls,
// OOM kills). apply, status, upgrade and doctor share it.
package health

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Workload kinds whose readiness a plane waits for. Everything else (Services,
// ConfigMaps, PDBs...) is ready once it exists.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
)

// IsWorkload reports whether obj is a Deployment or StatefulSet.
func IsWorkload(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "apps" && (gvk.Kind == KindDeployment || gvk.Kind == KindStatefulSet)
}

// KindJob is a rendered one-off task (MinIO's user setup) a plane waits for: what the
// next plane needs is done only once it has completed.
const KindJob = "Job"

// IsJob reports whether obj is a batch Job.
func IsJob(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "batch" && gvk.Kind == KindJob
}

// IsWaitedFor reports whether a plane waits for obj: a workload until it is ready, a
// Job until it has completed. A Job is not a workload: it has no replicas, no
// component readiness and no upgrade step.
func IsWaitedFor(obj *unstructured.Unstructured) bool { return IsWorkload(obj) || IsJob(obj) }

// Ready is the readiness of one object, by kstatus rules (observed generation, updated,
// ready and available replicas), the rules kapp, Flux and cli-utils use.
type Ready struct {
	Ready   bool
	Message string
	// Failed is kstatus's final verdict (a Deployment past its progress deadline):
	// waiting longer will not make it ready.
	Failed bool
}

// Check computes whether a live object is ready.
func Check(obj *unstructured.Unstructured) Ready {
	res, err := kstatus.Compute(obj)
	if err != nil {
		return Ready{Message: err.Error()}
	}
	return Ready{Ready: res.Status == kstatus.CurrentStatus, Failed: res.Status == kstatus.FailedStatus, Message: res.Message}
}

// Serving is the readiness one plane needs of the plane before it: every workload
// serves its current spec from at least one Ready pod. It is Check, except that a
// Deployment or StatefulSet still rolling out (more pods to start or replace, new pods
// not yet Available after minReadySeconds) counts as serving once one pod of its
// current spec is Ready. What the next plane needs is the service answering with the
// new spec; waiting for whole rollouts before each plane would put every plane's
// rollout, minReadySeconds and ordered StatefulSet starts included, in sequence. Apply
// gates the planes on Serving and waits for Check of them all, crash loops of the new
// pods still failing the run, at the end. A StatefulSet held by a rollout partition
// (an upgrade's canary step) is left to Check, as is a workload scaled to zero (it has
// no pod of its spec to serve from).
func Serving(obj *unstructured.Unstructured) Ready {
	r := Check(obj)
	if r.Ready || r.Failed || !IsWorkload(obj) {
		return r
	}
	nested := func(fields ...string) int64 {
		n, _, _ := unstructured.NestedInt64(obj.Object, fields...)
		return n
	}
	if nested("status", "observedGeneration") < obj.GetGeneration() ||
		nested("spec", "updateStrategy", "rollingUpdate", "partition") > 0 {
		return r
	}
	// Neither status counts the Ready pods of the current spec; at least this many
	// are, when every pod of an older spec is among the Ready ones.
	updated := nested("status", "updatedReplicas")
	older := nested("status", "replicas") - updated
	if updated > 0 && nested("status", "readyReplicas")-older > 0 {
		return Ready{Ready: true, Message: "serving the new spec; the rest of the rollout is waited for at the end"}
	}
	return r
}

// Replicas returns the desired and ready replicas of a Deployment or StatefulSet.
func Replicas(obj *unstructured.Unstructured) (desired, ready int32) {
	d, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		d = 1
	}
	r, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	return int32(d), int32(r)
}

// Explain says why a workload is not ready, from its pods: the first pod problem
// found for each distinct reason, such as
// `pod reasoning-service-6c9f Pending: 0/5 nodes are available: 5 Insufficient nvidia.com/gpu`.
// It returns "" when the pods show nothing wrong (they may just be starting).
func Explain(ctx context.Context, kc kubernetes.Interface, workload *unstructured.Unstructured) (string, error) {
	selector, err := selectorOf(workload)
	if err != nil {
		return "", err
	}
	pods, err := kc.CoreV1().Pods(workload.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return "", fmt.Errorf("list pods of %s: %w", workload.GetName(), err)
	}
	why := ExplainPods(pods.Items)
	// A pod's own status rarely says its node is the cause (the kubelet that would
	// report it is the one gone): the node's Ready condition does.
	if nodes := NodeProblems(ctx, kc, pods.Items); nodes != "" && why != "" {
		why = nodes + "; " + why
	} else if nodes != "" {
		why = nodes
	}
	return why, nil
}

// NodeProblems names the nodes not Ready under the pods that are not ready, with the
// node's Ready condition, e.g. `node worker-3 NotReady: Ready=Unknown (NodeStatusUnknown:
// Kubelet stopped posting node status.)`, and, for pods the scheduler cannot place,
// the NotReady nodes their nodeSelector picks: its "1 node(s) had untolerated taint
// {node.kubernetes.io/not-ready: }" names no node. A node that cannot be read (gone,
// or no permission to read nodes) is left out: this explains, it does not fail.
func NodeProblems(ctx context.Context, kc kubernetes.Interface, pods []corev1.Pod) string {
	var names []string
	for i := range pods {
		if n := pods[i].Spec.NodeName; n != "" && pods[i].DeletionTimestamp == nil && !PodReady(&pods[i]) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		node, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if problem := nodeNotReady(node); problem != "" {
			out = append(out, problem)
		}
	}
	for _, selector := range unschedulableSelectors(pods) {
		out = append(out, notReadyCandidates(ctx, kc, selector, &names)...)
	}
	return strings.Join(out, "; ")
}

// maxCandidateNodes bounds how many NotReady nodes one selector's pods name: on a
// large cluster without a nodeSelector, the rest are counted, not listed.
const maxCandidateNodes = 3

// unschedulableSelectors are the distinct nodeSelectors of the pods the scheduler
// reported it cannot place ("" is a pod without one: every node is a candidate).
func unschedulableSelectors(pods []corev1.Pod) []string {
	var out []string
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || !slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}) {
			continue
		}
		if s := labels.SelectorFromSet(p.Spec.NodeSelector).String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// notReadyCandidates describes the NotReady nodes that selector picks, at most
// maxCandidateNodes of them, leaving out those already named and adding its own.
func notReadyCandidates(ctx context.Context, kc kubernetes.Interface, selector string, named *[]string) []string {
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	var out []string
	more := 0
	for i := range nodes.Items {
		node := &nodes.Items[i]
		problem := nodeNotReady(node)
		switch {
		case problem == "" || slices.Contains(*named, node.Name):
		case len(out) < maxCandidateNodes:
			out = append(out, problem)
			*named = append(*named, node.Name)
		default:
			more++
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("%d more NotReady nodes", more))
	}
	return out
}

// nodeNotReady describes node's Ready condition when it is not True; "" when it is.
func nodeNotReady(node *corev1.Node) string {
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return ""
		}
		return fmt.Sprintf("node %s NotReady: Ready=%s (%s: %s)", node.Name, c.Status, c.Reason, c.Message)
	}
	return fmt.Sprintf("node %s NotReady: no Ready condition reported", node.Name)
}

// ExplainPods summarises what is wrong with pods, one clause per distinct problem.
func ExplainPods(pods []corev1.Pod) string {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	seen := map[string]bool{}
	var out []string
	for i := range pods {
		for _, problem := range PodProblems(&pods[i]) {
			if seen[problem.Reason] {
				continue
			}
			seen[problem.Reason] = true
			out = append(out, fmt.Sprintf("pod %s %s", pods[i].Name, problem))
		}
	}
	return strings.Join(out, "; ")
}

// Problem is one reason a pod is not healthy.
type Problem struct {
	// Reason is a short machine-readable cause: Unschedulable, CrashLoopBackOff,
	// ImagePullBackOff, OOMKilled, Evicted, NotReady...
	Reason  string
	Message string
}

func (p Problem) String() string {
	if p.Message == "" {
		return p.Reason
	}
	return p.Reason + ": " + p.Message
}

// PodProblems lists what is wrong with one pod; nil when it is running and ready.
func PodProblems(pod *corev1.Pod) []Problem {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	var out []Problem
	if pod.Status.Phase == corev1.PodFailed {
		reason := pod.Status.Reason
		if reason == "" {
			reason = "Failed"
		}
		return []Problem{{Reason: reason, Message: pod.Status.Message}}
	}
	if pod.Status.Phase == corev1.PodPending {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				out = append(out, Problem{Reason: "Unschedulable", Message: c.Message})
			}
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			msg := fmt.Sprintf("container %s (restarts %d)", cs.Name, cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil {
				msg += fmt.Sprintf(", last exit %s/%d", t.Reason, t.ExitCode)
			}
			out = append(out, Problem{Reason: w.Reason, Message: msg})
		}
		if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" && (cs.State.Waiting == nil) {
			out = append(out, Problem{Reason: "OOMKilled", Message: fmt.Sprintf("container %s was killed for exceeding its memory limit (restarts %d)", cs.Name, cs.RestartCount)})
		}
	}
	if len(out) == 0 && pod.Status.Phase == corev1.PodRunning && !PodReady(pod) {
		out = append(out, Problem{Reason: "NotReady", Message: "readiness probe not passing"})
	}
	return out
}

// PodReady reports whether pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// selectorOf is the label selector of a workload's pods, for callers that list them.
func selectorOf(obj *unstructured.Unstructured) (labels.Selector, error) {
	sel, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return labels.Nothing(), err
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}
