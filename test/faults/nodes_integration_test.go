//go:build faults

/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package faults

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// TestNodeNotReadyMidApply (scenario 6): the platform runs on two nodes of its own
// (their label as spec.global.nodeSelector, their taint in spec.global.tolerations),
// B cordoned for the install so that everything lands on A. Once the control plane
// is ready, A goes NotReady: the data plane's pods have nowhere to go, and the run
// fails after --plane-timeout naming node A and its Ready condition. Then B opens and
// the watch runs: the scheduler places the pending pods on B and the watch moves the
// Deployment pods off A after its node grace (postgres, a StatefulSet, stays:
// reported, not moved). With A Ready again, the re-run converges.
func TestNodeNotReadyMidApply(t *testing.T) {
	scenario(t, "6: a node NotReady mid-apply")
	c := testcluster.New(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	pool := testcluster.UniqueName(t, "pool")
	taint := []corev1.Taint{{Key: "onto.dev/pool", Value: pool, Effect: corev1.TaintEffectNoSchedule}}
	a := c.NewNode(t, map[string]string{"onto.dev/pool": pool}, taint)
	b := c.NewNode(t, map[string]string{"onto.dev/pool": pool}, taint)
	cordon(t, c, b.Name, true)
	file := platformFile(t, ns)
	appendSpec(t, file, fmt.Sprintf(`  global:
    nodeSelector: {onto.dev/pool: %s}
    tolerations:
    - {key: onto.dev/pool, operator: Equal, value: %s, effect: NoSchedule}
`, pool, pool))

	var notReadyAt time.Time
	// The run stops (SIGSTOP) until the node lifecycle controller has tainted A
	// not-ready, a few seconds: else the data plane's pods could land on A first.
	r := applyWithFault(t, c, file, planeReady(string(v1alpha1.PlaneControl)), func(run *os.Process) {
		if err := run.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = run.Signal(syscall.SIGCONT) }()
		if err := c.SetNodeNotReady(ctx, a.Name, true); err != nil {
			t.Error(err)
			return
		}
		notReadyAt = time.Now()
		if _, err := testcluster.WaitFor(ctx, c, a, time.Minute, func(n *corev1.Node) (bool, error) {
			return slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool {
				return tn.Key == corev1.TaintNodeNotReady && tn.Effect == corev1.TaintEffectNoSchedule
			}), nil
		}); err != nil {
			t.Errorf("node %s has no not-ready taint: %v", a.Name, err)
		}
		t.Logf("node A tainted not-ready %s after it went NotReady", time.Since(notReadyAt).Round(100*time.Millisecond))
	}, "--plane-timeout", "30s")
	t.Cleanup(func() { _ = c.SetNodeNotReady(context.Background(), a.Name, false) })
	failure := r.stderr
	if n := len(r.events); n > 0 && r.events[n-1].Type == apply.EventFailed {
		failure = r.events[n-1].Message
	}
	if r.code == 0 {
		t.Fatalf("the apply with node %s NotReady and node %s cordoned exited 0", a.Name, b.Name)
	}
	if want := "node " + a.Name + " NotReady: Ready=False (nodeFailed"; !strings.Contains(failure, want) || !strings.Contains(failure, "plane data") {
		t.Fatalf("the failure does not name the data plane and %q: %s\nstderr: %s", want, failure, r.stderr)
	}
	t.Logf("exit %d, %s after node A went NotReady: %s", r.code, time.Since(notReadyAt).Round(100*time.Millisecond), failure)

	// The watch, with B open: the Deployments' pods run on B in the end.
	cordon(t, c, b.Name, false)
	const grace = 5 * time.Second
	watch := exec.Command(plugin(t), "watch", "-n", ns, "--node-grace", grace.String(), "--audit-log", "-", "--kubeconfig", c.Kubeconfig)
	var watchOut bytes.Buffer
	watch.Stdout, watch.Stderr = &watchOut, &watchOut
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	watchStart := time.Now()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = watch.Process.Signal(syscall.SIGINT)
		_ = watch.Wait()
	}
	t.Cleanup(stop)
	deployments := []string{v1alpha1.ComponentOntologyService, v1alpha1.ComponentDataService, v1alpha1.ComponentNessie, v1alpha1.ComponentGateway}
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, comp := range deployments {
			pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelName + "=" + comp})
			if err != nil {
				return false, err
			}
			running := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					continue // evicted from A: kwok may not finish a delete on a NotReady node
				}
				running++
				if p.Spec.NodeName != b.Name || p.Status.Phase != corev1.PodRunning {
					last = fmt.Sprintf("%s on node %q, %s", p.Name, p.Spec.NodeName, p.Status.Phase)
					return false, nil
				}
			}
			if running == 0 {
				last = "no " + comp + " pod"
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the Deployments' pods are not all running on node B after 2 min of the watch: %s\nwatch:\n%s", last, watchOut.String())
	}
	t.Logf("with the watch, the Deployments' pods run on node B %s after it started (node grace %s)", time.Since(watchStart).Round(100*time.Millisecond), grace)
	if audit := watchOut.String(); !strings.Contains(audit, `"action":"evict-pod"`) || !strings.Contains(audit, a.Name) {
		t.Errorf("the watch's audit log has no evict-pod naming node %s:\n%s", a.Name, audit)
	}

	if err := c.SetNodeNotReady(ctx, a.Name, false); err != nil {
		t.Fatal(err)
	}
	if _, err := testcluster.WaitFor(ctx, c, a, time.Minute, func(n *corev1.Node) (bool, error) { return testcluster.NodeReady(n), nil }); err != nil {
		t.Fatalf("node %s is not Ready again: %v", a.Name, err)
	}
	stop()
	converges(t, c, ns, file)
}

// cordon marks node unschedulable, or schedulable again.
func cordon(t *testing.T, c *testcluster.Cluster, node string, on bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := c.Kube.CoreV1().Nodes().Patch(t.Context(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
