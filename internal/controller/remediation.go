/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// The memory remediation: a platform pod's main container OOM-killed at the limit the
// platform renders gets, with spec.remediation.memory.enabled, a raised limit recorded
// in status.remediations; every render (this watch's passes, apply, plan) applies it
// while the spec's own limit is lower, so the pass that follows rolls the component
// out with it.

const (
	// remediationOOMKilled is the reason label of onto_remediations_total.
	remediationOOMKilled = "oomkilled"
	// EventMemoryRaised: the watch raised a component's memory limit.
	EventMemoryRaised = "MemoryRaised"
	// EventRemediationBlocked: an OOM kill the watch may not answer with a raise.
	EventRemediationBlocked = "RemediationBlocked"

	defaultMemoryFactor   = "1.5"
	defaultMemoryCooldown = 30 * time.Minute
	mebibyte              = 1 << 20
)

// oomKilled is the terminated state of a container of pod last OOM-killed, nil if
// none.
func oomKilled(cs *corev1.ContainerStatus) *corev1.ContainerStateTerminated {
	if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
		return t
	}
	return nil
}

// oomKey identifies one OOM kill: the pod, its container and when it ended.
func oomKey(pod *corev1.Pod, container string, t *corev1.ContainerStateTerminated) string {
	return "oom/" + string(pod.UID) + "/" + container + "/" + t.FinishedAt.UTC().Format(time.RFC3339)
}

// oomPending reports whether pod shows an OOM kill no pass has handled yet.
func (rs *Reactions) oomPending(pod *corev1.Pod) bool {
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if t := oomKilled(cs); t != nil && !rs.reported(oomKey(pod, cs.Name, t)) {
			return true
		}
	}
	return false
}

func (rs *Reactions) unmark(key string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.seen, key)
}

// desiredID identifies what a pass renders: its source and generation, and the
// remediations, which change the render without changing either.
func desiredID(source string, p *v1alpha1.OntoPlatform) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s generation %d", source, p.Generation)
	for _, rm := range p.Status.Remediations {
		fmt.Fprintf(&b, " %s/%s=%s", rm.Component, rm.Container, rm.To)
	}
	return b.String()
}

// remediateMemory handles the OOM kills of the platform's pods, each once.
func (r *Reconciler) remediateMemory(ctx context.Context, p *v1alpha1.OntoPlatform, pods []corev1.Pod, now time.Time) {
	rs := r.Reactions
	var d *plan.Desired
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || isEvicted(pod) {
			continue
		}
		for j := range pod.Status.ContainerStatuses {
			cs := &pod.Status.ContainerStatuses[j]
			t := oomKilled(cs)
			if t == nil {
				continue
			}
			key := oomKey(pod, cs.Name, t)
			if _, isNew := rs.mark(key, now); !isNew {
				continue
			}
			if !p.Spec.Remediation.Memory.Enabled {
				continue
			}
			if d == nil {
				var err error
				if d, _, _, err = r.desired(ctx, p); err != nil {
					r.log().Warn("remediation: render the platform", "platform", p.Namespace+"/"+p.Name, "err", err)
					rs.unmark(key)
					rs.after(p, reactRetry)
					return
				}
			}
			if retry := r.remediateOOM(ctx, p, d, pods, pod, cs.Name, t, now); retry > 0 {
				rs.unmark(key)
				rs.after(p, retry)
			}
		}
	}
}

// remediateOOM answers one OOM kill; a positive duration asks to try again after it.
func (r *Reconciler) remediateOOM(ctx context.Context, p *v1alpha1.OntoPlatform, d *plan.Desired, pods []corev1.Pod,
	pod *corev1.Pod, container string, t *corev1.ContainerStateTerminated, now time.Time) time.Duration {
	log := r.log().With("platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "container", container)
	component := componentOf(pod)
	if last := lastRaise(p.Status.Remediations, component); last != nil && !last.Time.Time.Before(t.FinishedAt.Time) {
		return 0 // raised after this kill: already answered (a restarted watch)
	}
	workload := renderedWorkload(d, component)
	if workload == nil {
		return 0
	}
	main, rendered, replicas := mainContainer(workload)
	if main != container || rendered == nil {
		log.Info("OOM kill of a container whose memory limit the platform does not render; not remediated")
		return 0
	}
	current := podLimit(pod, container)
	if current == nil || current.Cmp(*rendered) != 0 {
		log.Info("OOM kill at a limit the platform no longer renders; not remediated", "rendered", rendered.String())
		return 0
	}
	if replicas == 0 {
		replicas = int32(countPods(pods, component))
	}
	m := p.Spec.Remediation.Memory
	cooldown := defaultMemoryCooldown
	if m.Cooldown != nil {
		cooldown = m.Cooldown.Duration
	}
	if last := lastRaise(p.Status.Remediations, component); last != nil && now.Sub(last.Time.Time) < cooldown {
		r.reactEvent(p, pod, EventRemediationBlocked, "RaiseMemory", fmt.Sprintf(
			"%s container %s of pod %s was OOM-killed at its memory limit %s; not raised: the limit was raised %s ago (%s → %s), within the cooldown of %s",
			component, container, pod.Name, current.String(), now.Sub(last.Time.Time).Round(time.Second), last.From, last.To, cooldown))
		r.reactAudit(p, pod, "remediation-blocked", remediationOOMKilled+": cooldown")
		return 0
	}
	if r.Drift == DriftReport {
		log.Info("OOM kill at the rendered limit; --drift=report writes nothing: not raised")
		return 0
	}
	var quotas corev1.ResourceQuotaList
	if r.Clients != nil {
		list, err := r.Clients.Kube.CoreV1().ResourceQuotas(p.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			log.Warn("remediation: list the namespace's ResourceQuotas", "err", err)
			return reactRetry
		}
		quotas = *list
	}
	to, capped, err := raiseMemory(*current, orDefault(m.Factor, defaultMemoryFactor), m.Max, quotas.Items, replicas)
	if err != nil {
		log.Warn("remediation: compute the raise", "err", err)
		return 0
	}
	if to.Cmp(*current) <= 0 {
		r.reactEvent(p, pod, EventRemediationBlocked, "RaiseMemory", fmt.Sprintf(
			"%s container %s of pod %s was OOM-killed at its memory limit %s; not raised: %s", component, container, pod.Name, current.String(), capped))
		r.reactAudit(p, pod, "remediation-blocked", remediationOOMKilled+": "+capped)
		return 0
	}
	// What the spec rendered before the first raise: a file that renders another
	// limit later wins over the raise (platform.Loaded.Kept).
	specLimit := ""
	if prev := lastRaise(p.Status.Remediations, component); prev != nil && prev.Container == container && prev.SpecLimit != "" {
		specLimit = prev.SpecLimit
	} else if q, ok := render.MemoryLimit(p, component); ok {
		specLimit = q.String()
	}
	before := p.DeepCopy()
	p.Status.Remediations = setRemediation(p.Status.Remediations, v1alpha1.Remediation{
		Component: component, Container: container, Resource: string(corev1.ResourceMemory),
		From: current.String(), To: to.String(), SpecLimit: specLimit, Time: metav1.NewTime(now), Pod: pod.Name,
	})
	// The status as read, or nothing: a write meanwhile (a CLI run, another pass) is
	// not overwritten; the next pass decides again.
	if err := r.Client.Status().Patch(ctx, p, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		before.DeepCopyInto(p)
		if apierrors.IsConflict(err) {
			return time.Second
		}
		log.Warn("remediation: record the raised limit", "err", err)
		return reactRetry
	}
	note := fmt.Sprintf("%s container %s: memory limit %s → %s after pod %s was OOM-killed at it", component, container, current.String(), to.String(), pod.Name)
	if capped != "" {
		note += " (" + capped + ")"
	}
	r.reactEvent(p, pod, EventMemoryRaised, "RaiseMemory", note+"; the component rolls out with it. Copy the new limit into the spec to keep it for good")
	r.reactAudit(p, pod, "raise-memory", remediationOOMKilled)
	r.Metrics.remediated(remediationOOMKilled)
	log.Info("raised a memory limit after an OOM kill", "component", component, "from", current.String(), "to", to.String())
	return 0
}

// raiseMemory is the limit after an OOM kill at current: current × factor rounded up to
// whole MiB, at most max, and at most what each ResourceQuota's limits.memory leaves
// for replicas pods each raised by the difference. capped says what capped it (empty
// when nothing did); a result not above current is a raise refused.
func raiseMemory(current resource.Quantity, factor string, maxQ *resource.Quantity, quotas []corev1.ResourceQuota, replicas int32) (resource.Quantity, string, error) {
	f, ok := new(big.Rat).SetString(factor)
	if !ok || f.Cmp(big.NewRat(1, 1)) <= 0 || f.Cmp(big.NewRat(4, 1)) > 0 {
		return resource.Quantity{}, "", fmt.Errorf("factor %q is not a decimal above 1 and at most 4", factor)
	}
	cur := current.Value()
	// ceil(cur × factor / MiB) × MiB
	n := new(big.Int).Mul(big.NewInt(cur), f.Num())
	den := new(big.Int).Mul(f.Denom(), big.NewInt(mebibyte))
	q, rem := new(big.Int).QuoRem(n, den, new(big.Int))
	if rem.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	to := q.Int64() * mebibyte
	capped := ""
	if maxQ != nil && to > maxQ.Value() {
		to, capped = maxQ.Value(), "capped by spec.remediation.memory.max "+maxQ.String()
	}
	replicas = max(replicas, 1)
	for _, rq := range quotas {
		hard, ok := rq.Status.Hard[corev1.ResourceLimitsMemory]
		if !ok {
			if hard, ok = rq.Spec.Hard[corev1.ResourceLimitsMemory]; !ok {
				continue
			}
		}
		used := rq.Status.Used[corev1.ResourceLimitsMemory]
		headroom := hard.Value() - used.Value()
		if limit := cur + max(headroom, 0)/int64(replicas)/mebibyte*mebibyte; to > limit {
			to = limit
			capped = fmt.Sprintf("capped by ResourceQuota %s: limits.memory %s of %s used, %s left for %d pod(s)",
				rq.Name, used.String(), hard.String(), resource.NewQuantity(max(headroom, 0), resource.BinarySI).String(), replicas)
		}
	}
	return *resource.NewQuantity(to, resource.BinarySI), capped, nil
}

// lastRaise is the component's remediation, nil when none.
func lastRaise(rems []v1alpha1.Remediation, component string) *v1alpha1.Remediation {
	var last *v1alpha1.Remediation
	for i := range rems {
		if rems[i].Component == component && (last == nil || rems[i].Time.After(last.Time.Time)) {
			last = &rems[i]
		}
	}
	return last
}

// setRemediation replaces the entry of rm's component and container, or appends rm,
// keeping at most 64 entries (the oldest dropped).
func setRemediation(rems []v1alpha1.Remediation, rm v1alpha1.Remediation) []v1alpha1.Remediation {
	out := make([]v1alpha1.Remediation, 0, len(rems)+1)
	for _, x := range rems {
		if x.Component != rm.Component || x.Container != rm.Container {
			out = append(out, x)
		}
	}
	out = append(out, rm)
	if len(out) > 64 {
		out = out[len(out)-64:]
	}
	return out
}

// renderedWorkload is the Deployment or StatefulSet of component in d.
func renderedWorkload(d *plan.Desired, component string) *unstructured.Unstructured {
	for _, obj := range d.Objects() {
		if (obj.GetKind() == "Deployment" || obj.GetKind() == "StatefulSet") && obj.GetLabels()[v1alpha1.LabelName] == component {
			return obj
		}
	}
	return nil
}

// mainContainer is the name and memory limit of the workload's first container, and
// its replicas (0 when an autoscaler owns them: the count an autoscaled Deployment
// renders is its size at creation only, not what runs now).
func mainContainer(obj *unstructured.Unstructured) (string, *resource.Quantity, int32) {
	replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if v1alpha1.CreateOnlyReplicas(obj.GetAnnotations()) {
		replicas = 0
	}
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return "", nil, int32(replicas)
	}
	c, _ := containers[0].(map[string]any)
	name, _, _ := unstructured.NestedString(c, "name")
	lim, ok, _ := unstructured.NestedString(c, "resources", "limits", "memory")
	if !ok {
		return name, nil, int32(replicas)
	}
	q, err := resource.ParseQuantity(lim)
	if err != nil {
		return name, nil, int32(replicas)
	}
	return name, &q, int32(replicas)
}

// podLimit is the memory limit of the pod's container, nil when none.
func podLimit(pod *corev1.Pod, container string) *resource.Quantity {
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				return &q
			}
		}
	}
	return nil
}

func countPods(pods []corev1.Pod, component string) int {
	n := 0
	for i := range pods {
		if componentOf(&pods[i]) == component && pods[i].DeletionTimestamp == nil && !isEvicted(&pods[i]) {
			n++
		}
	}
	return n
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
