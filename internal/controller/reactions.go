/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// Defaults of the reactions' settings.
const (
	// DefaultNodeGrace is how long a node's Ready condition must have been False or
	// Unknown before its Deployment pods are evicted (--node-grace).
	DefaultNodeGrace = 60 * time.Second
	// DefaultEvictedPodTTL is how long an evicted pod stays before the watch deletes
	// it (the controller manager's pod GC only starts at thousands of them).
	DefaultEvictedPodTTL = 5 * time.Minute
)

const (
	// recentChange: a pod template or config younger than this is a likely cause of
	// a crash loop.
	recentChange = time.Hour
	// forgetAfter: a reported crash loop, eviction or lost-node pod that no pass has
	// seen for this long is forgotten (reported again should it come back). Passes
	// come at least every healthyRequeue, so a lasting condition is never forgotten.
	forgetAfter = time.Hour
	// reactRetry: the pass after an Eviction a PodDisruptionBudget refused (429), or
	// after evictions, to check where the replacements went.
	reactRetry = 10 * time.Second
	// podNodeNameField indexes the cached pods by node.
	podNodeNameField = "spec.nodeName"
)

// Remediation reasons, the values of onto_remediations_total's reason label.
const (
	remediationCrashLoop = "crashloop"
	remediationEvicted   = "evicted"
	remediationLostNode  = "lost-node"
)

// Event reasons of the reactions.
const (
	EventCrashLoopBackOff = "CrashLoopBackOff"
	EventEvicted          = "Evicted"
	EventNodeLost         = "NodeLost"
)

// OutOfServiceTaint is the taint that tells Kubernetes a node is shut down for good,
// so it deletes the node's pods (StatefulSet pods included) and detaches their
// volumes.
const OutOfServiceTaint = "node.kubernetes.io/out-of-service"

// Reactions are the settings and memory of the reactions to failing pods. NewManager
// gives the Reconciler one; a Reconciler without one does not react.
//
// It is also the source of the delayed passes the reactions ask for (an evicted pod
// due for deletion, a node's grace running out, an Eviction to retry): registered
// with the controller (WatchesRawSource), it holds the controller's queue.
type Reactions struct {
	// NodeGrace: Deployment pods on a node NotReady for longer are evicted.
	NodeGrace time.Duration
	// EvictedPodTTL: evicted pods are deleted this long after their eviction; 0
	// deletes them at once.
	EvictedPodTTL time.Duration
	// NoNodes: the watch may not list and watch Nodes, so it knows no node's state:
	// no lost-node reaction, and Evicted Events do not name the node's pressure.
	NoNodes bool

	mu sync.Mutex
	// seen holds what was reported (crash-looping revisions, evicted pods, pods on a
	// lost node), so a pass does not report it again.
	seen  map[string]seenAt
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

type seenAt struct{ first, last time.Time }

// NewReactions returns Reactions with the given settings.
func NewReactions(nodeGrace, evictedPodTTL time.Duration) *Reactions {
	return &Reactions{NodeGrace: nodeGrace, EvictedPodTTL: evictedPodTTL, seen: map[string]seenAt{}}
}

// Start keeps the controller's queue for the delayed passes; it is the
// source.TypedSource the controller starts.
func (rs *Reactions) Start(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.queue = q
	return nil
}

// after brings the platform back in d. Before the controller runs (no queue), the
// periodic pass does.
func (rs *Reactions) after(p *v1alpha1.OntoPlatform, d time.Duration) {
	rs.mu.Lock()
	q := rs.queue
	rs.mu.Unlock()
	if q != nil {
		q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}, max(d, time.Second))
	}
}

// mark records key as seen now; true the first time (report it).
func (rs *Reactions) mark(key string, now time.Time) (first time.Time, isNew bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.seen == nil {
		rs.seen = map[string]seenAt{}
	}
	s, ok := rs.seen[key]
	if !ok {
		s.first = now
	}
	s.last = now
	rs.seen[key] = s
	return s.first, !ok
}

func (rs *Reactions) reported(key string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	_, ok := rs.seen[key]
	return ok
}

// forget drops what no pass has seen for forgetAfter.
func (rs *Reactions) forget(now time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for k, s := range rs.seen {
		if now.Sub(s.last) > forgetAfter {
			delete(rs.seen, k)
		}
	}
}

// react handles the platform's failing pods (crash loops, evictions, pods on a lost
// node) once per pass, before the platform itself is reconciled. Its errors are
// logged, never returned: a reaction that cannot run must not stop the repair of the
// platform.
//
//   - A container in CrashLoopBackOff: one Warning Event per crash-looping revision
//     of a component (its pod-template-hash), saying whether the template or config
//     changed within the hour. Nothing is deleted or restarted.
//   - An evicted pod: a Warning Event naming its node and the node's pressure, once;
//     EvictedPodTTL after the eviction the pod is deleted.
//   - A pod on a node NotReady for longer than NodeGrace: a Deployment's is evicted
//     through the Eviction API (PodDisruptionBudgets hold; a refusal is retried); a
//     StatefulSet's is never deleted, a Warning Event gives the safe way instead
//     (the out-of-service taint).
func (r *Reconciler) react(ctx context.Context, p *v1alpha1.OntoPlatform) {
	rs := r.Reactions
	if rs == nil {
		return
	}
	log := r.log().With("platform", p.Namespace+"/"+p.Name)
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(p.Namespace),
		client.MatchingLabels{v1alpha1.LabelInstance: p.Name, v1alpha1.LabelManagedBy: managedBy}); err != nil {
		log.Warn("reactions: list the platform's pods", "err", err)
		return
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	now := r.now()
	rs.forget(now)
	nodes := map[string]*corev1.Node{}
	node := func(name string) *corev1.Node {
		if n, ok := nodes[name]; ok || rs.NoNodes || name == "" {
			return n
		}
		n := &corev1.Node{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			if !apierrors.IsNotFound(err) {
				log.Warn("reactions: read node", "node", name, "err", err)
			}
			n = nil
		}
		nodes[name] = n
		return n
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		if isEvicted(pod) {
			r.reactEvicted(ctx, p, pod, node(pod.Spec.NodeName), now)
			continue
		}
		if c := crashLooping(pod); c != nil {
			r.reactCrashLoop(ctx, p, pod, c, now)
		}
		if pod.Spec.NodeName != "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			if n := node(pod.Spec.NodeName); n != nil {
				r.reactLostNode(ctx, p, pod, n, now)
			}
		}
	}
	r.remediateMemory(ctx, p, pods.Items, now)
}

// managedBy is the app.kubernetes.io/managed-by of every object the platform renders.
const managedBy = "kubectl-onto"

func podRef(pod *corev1.Pod) string { return "Pod " + pod.Namespace + "/" + pod.Name }

// reactEvent writes a Warning Event on the platform about one of its pods.
func (r *Reconciler) reactEvent(p *v1alpha1.OntoPlatform, pod *corev1.Pod, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	if len(note) > 1000 {
		note = note[:997] + "..."
	}
	r.Recorder.Eventf(p, pod, corev1.EventTypeWarning, reason, action, "%s", note)
}

// reportedBefore says whether this watch, in this process or an earlier one (before
// a restart or a leader change), wrote an Event with reason on platform p about pod
// or about a pod of the same key, less than forgetAfter before now. What was
// reported is remembered in-process; the Events are the cluster's record of it, read
// only when that memory has nothing: once per key and process. A failed read is
// logged and reports again: a duplicate Event is better than a lost one.
func (r *Reconciler) reportedBefore(ctx context.Context, p *v1alpha1.OntoPlatform, pod *corev1.Pod, reason string, key func(*corev1.Pod) string, now time.Time) bool {
	if r.Clients == nil || p.UID == "" {
		return false
	}
	sel := fields.Set{"involvedObject.uid": string(p.UID), "reason": reason}.AsSelector().String()
	list, err := r.Clients.Kube.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		r.log().Warn("reactions: read the platform's Events", "platform", p.Namespace+"/"+p.Name, "reason", reason, "err", err)
		return false
	}
	want := key(pod)
	for i := range list.Items {
		ev := &list.Items[i]
		rel := ev.Related
		if ev.ReportingController != Name || rel == nil || rel.Kind != "Pod" || now.Sub(eventLastSeen(ev)) > forgetAfter {
			continue
		}
		if rel.UID == pod.UID || rel.Name == pod.Name {
			return true
		}
		// Another pod of the same key (a crash-looping revision's other pods).
		var other corev1.Pod
		if r.Client.Get(ctx, types.NamespacedName{Namespace: rel.Namespace, Name: rel.Name}, &other) == nil && key(&other) == want {
			return true
		}
	}
	return false
}

// eventLastSeen is when ev last occurred: its series' last observation, else its
// time.
func eventLastSeen(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	default:
		return ev.LastTimestamp.Time
	}
}

func podUID(pod *corev1.Pod) string { return string(pod.UID) }

func (r *Reconciler) reactAudit(p *v1alpha1.OntoPlatform, pod *corev1.Pod, action, reason string) {
	r.Audit.Write(AuditRecord{Time: r.now(), Platform: p.Namespace + "/" + p.Name, Action: action, Object: podRef(pod), Reason: reason})
}

// --- crash loops ---

// crashLooping is the first container (init containers first) of pod waiting in
// CrashLoopBackOff; nil if none.
func crashLooping(pod *corev1.Pod) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			if w := list[i].State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				return &list[i]
			}
		}
	}
	return nil
}

// revisionOf is the revision of the pod's template: the pod-template-hash of a
// Deployment's pod, the controller-revision-hash of a StatefulSet's; the pod's
// name for a pod of neither.
func revisionOf(pod *corev1.Pod) string {
	if h := pod.Labels["pod-template-hash"]; h != "" {
		return h
	}
	if h := pod.Labels["controller-revision-hash"]; h != "" {
		return h
	}
	return pod.Name
}

func componentOf(pod *corev1.Pod) string {
	if c := pod.Labels[v1alpha1.LabelName]; c != "" {
		return c
	}
	return pod.Name
}

func crashLoopKey(pod *corev1.Pod) string {
	return "crashloop/" + pod.Namespace + "/" + pod.Labels[v1alpha1.LabelInstance] + "/" + componentOf(pod) + "/" + revisionOf(pod)
}

func (r *Reconciler) reactCrashLoop(ctx context.Context, p *v1alpha1.OntoPlatform, pod *corev1.Pod, c *corev1.ContainerStatus, now time.Time) {
	if _, isNew := r.Reactions.mark(crashLoopKey(pod), now); !isNew || r.reportedBefore(ctx, p, pod, EventCrashLoopBackOff, crashLoopKey, now) {
		return
	}
	last := "no previous exit recorded"
	if t := c.LastTerminationState.Terminated; t != nil {
		last = fmt.Sprintf("last exit code %d (%s)", t.ExitCode, orDash(t.Reason))
	}
	note := fmt.Sprintf("%s revision %s: container %s of pod %s in CrashLoopBackOff, %s, %d restarts; %s. No pod is deleted or restarted.",
		componentOf(pod), revisionOf(pod), c.Name, pod.Name, last, c.RestartCount, r.templateChange(ctx, pod, now))
	r.reactEvent(p, pod, EventCrashLoopBackOff, "Report", note)
	r.reactAudit(p, pod, "report-crashloop", remediationCrashLoop)
	r.Metrics.remediated(remediationCrashLoop)
	r.log().Info("crash loop", "platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "container", c.Name, "restarts", c.RestartCount)
}

// templateChange says whether the pod's template or config changed within the hour.
// A changed config is a changed template too: the config is a ConfigMap whose name
// carries its content's hash, and the template names it. So the revision's creation
// is the time of the last template or config change: the owning ReplicaSet's
// creationTimestamp for a Deployment's pod, the ControllerRevision's for a
// StatefulSet's. Read from the API server, not the cache: it is needed once per
// crash-looping revision, too rarely for an informer on every ReplicaSet.
func (r *Reconciler) templateChange(ctx context.Context, pod *corev1.Pod, now time.Time) string {
	owner := metav1.GetControllerOf(pod)
	if owner == nil || r.Clients == nil {
		return "not a Deployment's or StatefulSet's pod: no revision to date"
	}
	var what string
	var created metav1.Time
	var err error
	switch owner.Kind {
	case "ReplicaSet":
		what = "ReplicaSet " + owner.Name
		rs, e := r.Clients.Kube.AppsV1().ReplicaSets(pod.Namespace).Get(ctx, owner.Name, metav1.GetOptions{})
		if err = e; e == nil {
			created = rs.CreationTimestamp
		}
	case "StatefulSet":
		rev := pod.Labels["controller-revision-hash"]
		what = "ControllerRevision " + rev
		cr, e := r.Clients.Kube.AppsV1().ControllerRevisions(pod.Namespace).Get(ctx, rev, metav1.GetOptions{})
		if err = e; e == nil {
			created = cr.CreationTimestamp
		}
	default:
		return "owned by a " + owner.Kind + ": no revision to date"
	}
	if err != nil {
		return fmt.Sprintf("whether its template or config changed recently is unknown (%s: %v)", what, err)
	}
	age := now.Sub(created.Time).Round(time.Second)
	if age < recentChange {
		return fmt.Sprintf("its pod template or config changed %s ago (%s created %s): the change is the likely cause",
			age, what, created.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("its pod template and config did not change within the hour (%s created %s ago): look at the container's logs and what it depends on", what, age)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// --- evictions ---

func isEvicted(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == "Evicted"
}

func evictedKey(pod *corev1.Pod) string { return "evicted/" + string(pod.UID) }

// evictedAt is when the pod was evicted: the lastTransitionTime of its
// DisruptionTarget condition, which the kubelet sets when it evicts (reason
// TerminationByKubelet), the exact moment; without it, that of the Ready condition
// turned False, which fails with the pod. status.startTime is not used: it is when
// the pod started, possibly days before. With neither condition, first, when this
// watch first saw the pod evicted, which is never early.
func evictedAt(pod *corev1.Pod, first time.Time) time.Time {
	var ready time.Time
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero():
			return c.LastTransitionTime.Time
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero():
			ready = c.LastTransitionTime.Time
		}
	}
	if !ready.IsZero() {
		return ready
	}
	return first
}

// pressureOf names the node's pressure conditions that are True.
func pressureOf(n *corev1.Node, noNodes bool) string {
	switch {
	case noNodes:
		return "its conditions unknown: this watch may not read Nodes"
	case n == nil:
		return "the node no longer exists"
	}
	var out []string
	for _, c := range n.Status.Conditions {
		switch c.Type {
		case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
			if c.Status == corev1.ConditionTrue {
				out = append(out, string(c.Type))
			}
		}
	}
	if len(out) == 0 {
		return "no pressure condition is True on it now"
	}
	return strings.Join(out, ", ")
}

func (r *Reconciler) reactEvicted(ctx context.Context, p *v1alpha1.OntoPlatform, pod *corev1.Pod, n *corev1.Node, now time.Time) {
	rs := r.Reactions
	first, isNew := rs.mark(evictedKey(pod), now)
	if isNew && !r.reportedBefore(ctx, p, pod, EventEvicted, evictedKey, now) {
		node := orDash(pod.Spec.NodeName)
		note := fmt.Sprintf("pod %s (%s) was evicted from node %s (%s): %s", pod.Name, componentOf(pod), node, pressureOf(n, rs.NoNodes), orDash(pod.Status.Message))
		if rs.EvictedPodTTL > 0 {
			note += fmt.Sprintf("; the watch deletes the failed pod %s after the eviction", rs.EvictedPodTTL)
		}
		r.reactEvent(p, pod, EventEvicted, "Report", note)
		r.reactAudit(p, pod, "report-evicted", remediationEvicted)
		r.Metrics.remediated(remediationEvicted)
		r.log().Info("evicted pod", "platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "node", node)
	}
	if r.Drift == DriftReport {
		return // reported above; --drift=report writes nothing
	}
	if wait := rs.EvictedPodTTL - now.Sub(evictedAt(pod, first)); wait > 0 {
		rs.after(p, wait+time.Second)
		return
	}
	// The UID precondition spares a StatefulSet's new pod of the same name.
	err := r.Clients.Kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	switch {
	case err == nil:
		r.reactAudit(p, pod, "delete-evicted-pod", remediationEvicted)
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
	default:
		r.log().Warn("reactions: delete evicted pod", "platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "err", err)
	}
}

// --- lost nodes ---

// notReadySince is when the node's Ready condition turned False or Unknown; zero when
// it is Ready, or has no Ready condition yet.
func notReadySince(n *corev1.Node) (since time.Time, status corev1.ConditionStatus, reason string) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return time.Time{}, c.Status, c.Reason
			}
			return c.LastTransitionTime.Time, c.Status, c.Reason
		}
	}
	return time.Time{}, "", ""
}

func (r *Reconciler) reactLostNode(ctx context.Context, p *v1alpha1.OntoPlatform, pod *corev1.Pod, n *corev1.Node, now time.Time) {
	rs := r.Reactions
	since, status, reason := notReadySince(n)
	if status == "" || status == corev1.ConditionTrue {
		return
	}
	// Counted from the later of the condition's lastTransitionTime and when this
	// watch first saw the node NotReady (in this transition): the timestamp alone
	// can be earlier than the failure (kwok's NotReady stage sets the node's
	// creation time) or come from a clock ahead of this host's, and an eviction
	// too early is the mistake to avoid. After a restart the watch waits a grace
	// again; the node watch brings a pass at the transition, so otherwise the two
	// agree.
	seen, _ := rs.mark("notready/"+n.Name+"/"+string(n.UID)+"/"+since.UTC().Format(time.RFC3339), now)
	if seen.After(since) {
		since = seen
	}
	down := now.Sub(since)
	if down < rs.NodeGrace {
		rs.after(p, rs.NodeGrace-down+time.Second)
		return
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return
	}
	state := fmt.Sprintf("NotReady for %s (Ready=%s: %s)", down.Round(time.Second), status, orDash(reason))
	switch owner.Kind {
	case "ReplicaSet":
		if r.Drift == DriftReport {
			return // --drift=report writes nothing; the node's own eviction moves them later
		}
		key := "evict/" + string(pod.UID)
		if rs.reported(key) {
			return
		}
		err := r.Clients.Kube.PolicyV1().Evictions(pod.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))},
		})
		switch {
		case apierrors.IsTooManyRequests(err):
			// A PodDisruptionBudget allows no disruption now: the next pass tries again.
			r.log().Info("eviction from a lost node refused (PodDisruptionBudget); retrying", "platform", p.Namespace+"/"+p.Name,
				"pod", pod.Name, "node", n.Name, "err", err, "retryIn", reactRetry)
			rs.after(p, reactRetry)
			return
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			return
		case err != nil:
			r.log().Warn("reactions: evict pod from a lost node", "platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "node", n.Name, "err", err)
			rs.after(p, reactRetry)
			return
		}
		rs.mark(key, now)
		r.reactEvent(p, pod, EventNodeLost, "Evict", fmt.Sprintf("pod %s (%s) evicted from node %s, %s: its ReplicaSet starts a replacement on another node",
			pod.Name, componentOf(pod), n.Name, state))
		r.reactAudit(p, pod, "evict-pod", remediationLostNode)
		r.Metrics.remediated(remediationLostNode)
		r.log().Info("evicted a pod from a lost node", "platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "node", n.Name, "down", down)
		// Come back to see where the replacement went.
		rs.after(p, reactRetry)
	case "StatefulSet":
		if _, isNew := rs.mark("nodelost/"+string(pod.UID)+"/"+n.Name, now); !isNew || r.reportedBefore(ctx, p, pod, EventNodeLost, podUID, now) {
			return
		}
		r.reactEvent(p, pod, EventNodeLost, "Report", fmt.Sprintf(
			"pod %s of StatefulSet %s is on node %s, %s. It is not deleted: a StatefulSet pod must never run twice, and nothing proves the node stopped it. "+
				"If the node is shut down for good, the safe way is `kubectl taint node %s %s=nodeshutdown:NoExecute`: Kubernetes then deletes the node's pods and detaches their volumes, and the StatefulSet starts the pod elsewhere",
			pod.Name, owner.Name, n.Name, state, n.Name, OutOfServiceTaint))
		r.reactAudit(p, pod, "report-node-lost", remediationLostNode)
		r.Metrics.remediated(remediationLostNode)
		r.log().Info("a StatefulSet pod is on a lost node", "platform", p.Namespace+"/"+p.Name, "pod", pod.Name, "node", n.Name, "down", down)
	}
}

// --- cache and watches ---

// reactionsCache adds the pods of the platforms (by their managed-by label) and,
// unless noNodes, the nodes (without their image lists and managed fields) to the
// manager's cache.
func reactionsCache(byObject map[client.Object]cache.ByObject, noNodes bool) {
	byObject[&corev1.Pod{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: managedBy}), Transform: slimPod}
	if !noNodes {
		byObject[&corev1.Node{}] = cache.ByObject{Transform: slimNode}
	}
}

// mayWatchNodes asks the API server whether this watch may list and watch Nodes
// (cluster-scoped: a watch run with a namespaced Role may not). Without, a Node
// informer would never sync and the controller would not start; the watch runs
// without the node reactions instead. An unanswered question counts as yes.
func mayWatchNodes(clients *kube.Clients, log *slog.Logger) bool {
	if clients == nil || clients.Kube == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, verb := range []string{"list", "watch"} {
		review, err := clients.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "nodes"}},
		}, metav1.CreateOptions{})
		if err != nil {
			return true
		}
		if !review.Status.Allowed {
			if log != nil {
				log.Warn("this watch may not " + verb + " nodes: pods on a lost node are not evicted, and Evicted Events do not name the node's pressure")
			}
			return false
		}
	}
	return true
}

// slimNode drops what the reactions never read and a node carries much of: the
// images it holds (up to 50 entries of a few names each) and the managed fields.
func slimNode(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		n.Status.Images = nil
		n.ManagedFields = nil
	}
	return obj, nil
}

var _ toolscache.TransformFunc = slimNode

// slimPod keeps of a pod what the reactions and the remediation read: its metadata
// (less the managed fields), its node, its containers' names and memory limits, and
// its status. The rest of the spec (environment, probes, volumes, scheduling rules)
// was half of a tenant pod's cached size, and a watch of 100 tenants caches 1,300 pods.
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName, Containers: slimContainers(pod.Spec.Containers, true),
		InitContainers: slimContainers(pod.Spec.InitContainers, true)}
	return pod, nil
}

// slimContainers keeps the containers' names and images, and with memoryLimit their
// memory limits (a resource list is a map: hundreds of bytes each).
func slimContainers(cs []corev1.Container, memoryLimit bool) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image}
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && memoryLimit {
			out[i].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q}
		}
	}
	return out
}

var _ toolscache.TransformFunc = slimPod

// watchPodsAndNodes adds to b what brings a platform back for its reactions: its
// pods turning to a failure not yet reported, a node with its pods changing
// readiness, and the delayed passes the reactions ask for.
func (r *Reconciler) watchPodsAndNodes(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	if r.Reactions == nil {
		return b, nil
	}
	if !r.Reactions.NoNodes {
		b = b.Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.platformsOnNode), builder.WithPredicates(nodeReadyChanged()))
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeNameField, func(o client.Object) []string {
		if pod, ok := o.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
			return []string{pod.Spec.NodeName}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("index pods by node: %w", err)
	}
	return b.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(platformOfPod), builder.WithPredicates(r.Reactions.podFailing())).
		WatchesRawSource(r.Reactions), nil
}

// platformOfPod maps a pod to its platform: the pod's namespace, and its
// app.kubernetes.io/instance label for the name.
func platformOfPod(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[v1alpha1.LabelManagedBy] != managedBy || l[v1alpha1.LabelInstance] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[v1alpha1.LabelInstance]}}}
}

// platformsOnNode maps a node to the platforms with pods on it.
func (r *Reconciler) platformsOnNode(ctx context.Context, obj client.Object) []reconcile.Request {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.MatchingFields{podNodeNameField: obj.GetName()}); err != nil {
		r.log().Warn("reactions: list pods on node", "node", obj.GetName(), "err", err)
		return nil
	}
	seen := map[reconcile.Request]bool{}
	var out []reconcile.Request
	for i := range pods.Items {
		for _, req := range platformOfPod(ctx, &pods.Items[i]) {
			if !seen[req] {
				seen[req] = true
				out = append(out, req)
			}
		}
	}
	return out
}

// podFailing passes a pod that shows a failure not yet reported: a container in
// CrashLoopBackOff of a revision not reported, or an eviction not reported. Status
// updates of healthy pods (and of failing pods already reported: a crash loop's
// restarts) bring no pass. A deleted pod needs no reaction; a pod on a lost node
// comes through its node's event.
func (rs *Reactions) podFailing() predicate.Predicate {
	failing := func(obj client.Object) bool {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp != nil {
			return false
		}
		switch {
		case isEvicted(pod):
			return !rs.reported(evictedKey(pod))
		case crashLooping(pod) != nil:
			return !rs.reported(crashLoopKey(pod))
		}
		return rs.oomPending(pod)
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return failing(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return failing(e.ObjectNew) },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// nodeReadyChanged passes a node whose Ready condition changed status.
func nodeReadyChanged() predicate.Predicate {
	status := func(obj client.Object) corev1.ConditionStatus {
		if n, ok := obj.(*corev1.Node); ok {
			_, s, _ := notReadySince(n)
			return s
		}
		return ""
	}
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(e event.UpdateEvent) bool { return status(e.ObjectOld) != status(e.ObjectNew) },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
