/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// platformEvents are the Events on the platform with reason.
func (e *watchEnv) platformEvents(reason string) ([]eventsv1.Event, error) {
	list, err := e.clients.Kube.EventsV1().Events(e.p.Namespace).List(e.t.Context(), metav1.ListOptions{FieldSelector: "regarding.name=" + e.p.Name})
	if err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out, nil
}

// pods are the platform's pods of component, those being deleted left out.
func (e *watchEnv) pods(component string) []corev1.Pod {
	e.t.Helper()
	sel := labels.SelectorFromSet(labels.Set{v1alpha1.LabelName: component, v1alpha1.LabelInstance: e.p.Name}).String()
	list, err := e.clients.Kube.CoreV1().Pods(e.p.Namespace).List(e.t.Context(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// runningPod is a Running pod of component.
func (e *watchEnv) runningPod(component string) corev1.Pod {
	e.t.Helper()
	var pod corev1.Pod
	e.eventually(component+" pod running", 60*time.Second, func() (bool, error) {
		for _, p := range e.pods(component) {
			if p.Status.Phase == corev1.PodRunning {
				pod = p
				return true, nil
			}
		}
		return false, nil
	})
	return pod
}

func describeEvents(evs []eventsv1.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		count := int32(1)
		if ev.Series != nil {
			count = ev.Series.Count
		}
		fmt.Fprintf(&b, "\n  %s %s (×%d): %s", ev.Reason, ev.Action, count, ev.Note)
	}
	return b.String()
}

// TestReactCrashLoop: a crash-looping data-service pod gives exactly one
// CrashLoopBackOff Event, however many passes follow, and is not deleted.
func TestReactCrashLoop(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	e := startWatchWith(t, c, nil, nil)
	ctx, ns := t.Context(), e.p.Namespace
	pod := e.runningPod("data-service")

	start := time.Now()
	if err := c.SetPodChaos(ctx, ns, pod.Name, testcluster.ChaosCrashLoop); err != nil {
		t.Fatal(err)
	}
	var evs []eventsv1.Event
	e.eventually("a CrashLoopBackOff Event", 60*time.Second, func() (bool, error) {
		var err error
		evs, err = e.platformEvents(controller.EventCrashLoopBackOff)
		return len(evs) > 0, err
	})
	t.Logf("CrashLoopBackOff Event %s after the crash loop was set on: %s", time.Since(start).Round(100*time.Millisecond), evs[0].Note)
	note := evs[0].Note
	for _, want := range []string{"data-service", pod.Name, "restarts", "No pod is deleted"} {
		if !strings.Contains(note, want) {
			t.Errorf("the Event's note does not say %q: %s", want, note)
		}
	}
	// The platform was installed a minute ago: its template is recent.
	if !strings.Contains(note, "changed") || strings.Contains(note, "did not change") {
		t.Errorf("a revision created by this test's install is not reported as a recent change: %s", note)
	}
	if evs[0].Related == nil || evs[0].Related.Name != pod.Name {
		t.Errorf("the Event's related object is %+v, want the pod %s", evs[0].Related, pod.Name)
	}

	// Restarts go on every 3 s and the Deployment is not ready: passes follow.
	var live *corev1.Pod
	e.staysTrue("one CrashLoopBackOff Event, occurring once, for 10 s, and the pod kept", 10*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventCrashLoopBackOff)
		if err != nil {
			return false, err
		}
		if len(evs) != 1 || (evs[0].Series != nil && evs[0].Series.Count > 1) {
			return false, fmt.Errorf("got:%s", describeEvents(evs))
		}
		live, err = c.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || live.UID != pod.UID || live.DeletionTimestamp != nil {
			return false, fmt.Errorf("the crash-looping pod was deleted or replaced (err %v)", err)
		}
		return true, nil
	})
	if got := live.Status.ContainerStatuses[0].RestartCount; got < 3 {
		t.Errorf("the pod restarted %d times in over 10 s: is the crash loop on?", got)
	}
	if n := strings.Count(e.audit.String(), `"action":"report-crashloop"`); n != 1 {
		t.Errorf("%d report-crashloop audit lines, want 1:\n%s", n, e.audit.String())
	}

	// A restarted watch (or a new leader) remembers nothing of it, but the cluster
	// has the Event: the crash loop is not reported a second time.
	before := e.sent.count("GET /api/v1/namespaces/"+ns+"/events?", "involvedObject.uid")
	e.restart()
	e.eventually("the restarted watch reading the platform's Events", 60*time.Second, func() (bool, error) {
		return e.sent.count("GET /api/v1/namespaces/"+ns+"/events?", "involvedObject.uid") > before, nil
	})
	// An Event it would write goes out after its read: none does for 2 s.
	e.staysTrue("after a restart of the watch, still one CrashLoopBackOff Event, occurring once", 2*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventCrashLoopBackOff)
		if err != nil {
			return false, err
		}
		if len(evs) != 1 || (evs[0].Series != nil && evs[0].Series.Count > 1) {
			return false, fmt.Errorf("got:%s", describeEvents(evs))
		}
		return true, nil
	})
	if n := strings.Count(e.audit.String(), `"action":"report-crashloop"`); n != 1 {
		t.Errorf("%d report-crashloop audit lines after the restart, want 1:\n%s", n, e.audit.String())
	}
}

// TestReactEvicted: an evicted pod gives an Evicted Event naming its node, and is
// deleted once older than the evicted pods' TTL (0 here).
func TestReactEvicted(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	e := startWatchWith(t, c, nil, func(o *controller.Options) { o.EvictedPodTTL = -1 })
	ctx, ns := t.Context(), e.p.Namespace
	pod := e.runningPod("nessie")

	start := time.Now()
	if err := c.SetPodChaos(ctx, ns, pod.Name, testcluster.ChaosEvicted); err != nil {
		t.Fatal(err)
	}
	var ev eventsv1.Event
	e.eventually("an Evicted Event naming the node", 60*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventEvicted)
		for _, x := range evs {
			if strings.Contains(x.Note, pod.Name) {
				ev = x
				return true, nil
			}
		}
		return false, err
	})
	t.Logf("Evicted Event %s after the eviction was set on: %s", time.Since(start).Round(100*time.Millisecond), ev.Note)
	if !strings.Contains(ev.Note, "node "+pod.Spec.NodeName) || !strings.Contains(ev.Note, "pressure") {
		t.Errorf("the Event names neither node %s nor its pressure: %s", pod.Spec.NodeName, ev.Note)
	}
	e.eventually("the evicted pod deleted", 30*time.Second, func() (bool, error) {
		p, err := c.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || (err == nil && p.UID != pod.UID), client404(err)
	})
	t.Logf("evicted pod gone %s after the eviction was set on", time.Since(start).Round(100*time.Millisecond))
	e.eventually("audit line delete-evicted-pod", 10*time.Second, func() (bool, error) {
		return strings.Contains(e.audit.String(), `"action":"delete-evicted-pod","object":"Pod `+ns+"/"+pod.Name+`"`), nil
	})
	if evs, _ := e.platformEvents(controller.EventEvicted); len(evs) != 1 {
		t.Errorf("want one Evicted Event; got:%s", describeEvents(evs))
	}
}

func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// TestReactLostNode: the platform runs on node A of its own pool of two; A goes
// NotReady. After the node grace, the Deployments' pods are evicted and run on B;
// postgres (a StatefulSet) stays on A, with a NodeLost Event giving the
// out-of-service taint. The watch runs as the ServiceAccount watch install creates.
func TestReactLostNode(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	pool := testcluster.UniqueName(t, "pool")
	taint := []corev1.Taint{{Key: "onto.dev/pool", Value: pool, Effect: corev1.TaintEffectNoSchedule}}
	a := c.NewNode(t, map[string]string{"onto.dev/pool": pool}, taint)
	b := c.NewNode(t, map[string]string{"onto.dev/pool": pool}, taint)
	// Everything on A: B cordoned for the install.
	cordon := func(node string, on bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
		if _, err := c.Kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cordon(b.Name, true)
	const grace = 5 * time.Second
	// As the installed ServiceAccount: the lost-node reaction (nodes read, pods
	// evicted, Events written) is what its rights must allow.
	e := startWatchAs(t, c, func(s *v1alpha1.OntoPlatformSpec) {
		s.Global.NodeSelector = map[string]string{"onto.dev/pool": pool}
		s.Global.Tolerations = []corev1.Toleration{{Key: "onto.dev/pool", Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}}
	}, func(o *controller.Options) { o.NodeGrace = grace }, true)
	cordon(b.Name, false)
	ns := e.p.Namespace

	deployments := []string{v1alpha1.ComponentOntologyService, v1alpha1.ComponentDataService, v1alpha1.ComponentNessie, v1alpha1.ComponentGateway}
	for _, comp := range append(deployments, v1alpha1.ComponentPostgres) {
		pods := e.pods(comp)
		if len(pods) == 0 {
			t.Fatalf("no %s pod after the install", comp)
		}
		for _, p := range pods {
			if p.Spec.NodeName != a.Name {
				t.Fatalf("pod %s on node %s, want %s", p.Name, p.Spec.NodeName, a.Name)
			}
		}
	}
	postgres := e.pods(v1alpha1.ComponentPostgres)[0]

	start := time.Now()
	if err := c.SetNodeNotReady(ctx, a.Name, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.SetNodeNotReady(context.Background(), a.Name, false) })

	e.eventually("the Deployments' pods running on node B", grace+30*time.Second, func() (bool, error) {
		for _, comp := range deployments {
			pods := e.pods(comp)
			if len(pods) == 0 {
				return false, fmt.Errorf("no %s pod", comp)
			}
			for _, p := range pods {
				if p.Spec.NodeName != b.Name || p.Status.Phase != corev1.PodRunning {
					return false, fmt.Errorf("%s on node %q, %s", p.Name, p.Spec.NodeName, p.Status.Phase)
				}
			}
		}
		return true, nil
	})
	moved := time.Since(start)
	t.Logf("the Deployments' pods run on node B %s after node A went NotReady (grace %s)", moved.Round(100*time.Millisecond), grace)
	if moved < grace {
		t.Errorf("pods moved %s after the node went NotReady, before its grace of %s", moved, grace)
	}

	var lost eventsv1.Event
	e.eventually("a NodeLost Event for postgres", 30*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventNodeLost)
		for _, ev := range evs {
			if ev.Action == "Report" && strings.Contains(ev.Note, postgres.Name) {
				lost = ev
				return true, nil
			}
		}
		return false, err
	})
	t.Logf("NodeLost Event %s after node A went NotReady: %s", time.Since(start).Round(100*time.Millisecond), lost.Note)
	for _, want := range []string{a.Name, "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute", "kubectl taint node " + a.Name} {
		if !strings.Contains(lost.Note, want) {
			t.Errorf("the NodeLost Event does not say %q: %s", want, lost.Note)
		}
	}
	live, err := c.Kube.CoreV1().Pods(ns).Get(ctx, postgres.Name, metav1.GetOptions{})
	if err != nil || live.UID != postgres.UID || live.DeletionTimestamp != nil || live.Spec.NodeName != a.Name {
		t.Fatalf("postgres was deleted or moved from the lost node (err %v)", err)
	}
	audit := e.audit.String()
	if n := strings.Count(audit, `"action":"evict-pod"`); n != len(deployments) {
		t.Errorf("%d evict-pod audit lines, want %d:\n%s", n, len(deployments), audit)
	}
	if n := strings.Count(audit, `"action":"report-node-lost"`); n != 1 {
		t.Errorf("%d report-node-lost audit lines, want 1:\n%s", n, audit)
	}
	// A few more passes report nothing twice.
	e.staysTrue(fmt.Sprintf("%d NodeLost Events", len(deployments)+1), 5*time.Second, func() (bool, error) {
		evs, err := e.platformEvents(controller.EventNodeLost)
		if err != nil {
			return false, err
		}
		if len(evs) != len(deployments)+1 {
			return false, fmt.Errorf("got:%s", describeEvents(evs))
		}
		return true, nil
	})
}
