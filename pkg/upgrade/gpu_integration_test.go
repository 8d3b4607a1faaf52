/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestUpgradeGPUCanaryTakesAnOldPodsPlace: reasoning-service runs 2 pods of 2 GPUs on
// a node of its own with 4, none to spare. Its Deployment rolls with maxSurge 0, so
// its canary takes the place of one old pod instead of waiting for a GPU: the
// upgrade finishes and no canary pod is ever unschedulable.
func TestUpgradeGPUCanaryTakesAnOldPodsPlace(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	// A resource name of the test's own: only its node has it (onto-gpu-0 stays for
	// other tests), and the render tolerates the taint of the same key.
	gpu := corev1.ResourceName("example.com/" + testcluster.UniqueName(t, "test-gpu"))
	node := c.NewNode(t, nil, []corev1.Taint{{Key: string(gpu), Value: "present", Effect: corev1.TaintEffectNoSchedule}},
		testcluster.WithAllocatable(corev1.ResourceList{gpu: resource.MustParse("4")}))
	onGPU := func(s *v1alpha1.OntoPlatformSpec) {
		off := ptr.To(false)
		s.DataPlane.DataService.Enabled, s.DataPlane.Nessie.Enabled, s.Gateway.Enabled = off, off, off
		rs := &s.IntelligencePlane.ReasoningService
		rs.Enabled, rs.Replicas = ptr.To(true), ptr.To(int32(2))
		rs.GPU = &v1alpha1.GPUSpec{Enabled: true, Count: 2, ResourceName: string(gpu)}
	}
	e := installAt(t, "1.5.0", ontotest.Small, onGPU)

	ctx := t.Context()
	dep, err := e.clients.Kube.AppsV1().Deployments(e.p.Namespace).Get(ctx, "reasoning-service", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ru := dep.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxSurge == nil || ru.MaxSurge.IntValue() != 0 {
		t.Fatalf("reasoning-service rolls with %+v, want maxSurge 0", dep.Spec.Strategy)
	}
	if n := gpuPodsOn(t, e, node.Name, gpu); n != 2 {
		t.Fatalf("%d reasoning-service pods with %s on node %s, want 2 (the node full)", n, gpu, node.Name)
	}

	w := watchUnschedulable(ctx, t, e, "reasoning-service")
	res, err := e.run("upgrade", "1.6.0", 0, false)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	canary, other := w.stop()
	if len(canary) > 0 {
		t.Errorf("canary pods were unschedulable: %s", strings.Join(canary, "; "))
	}
	if len(other) > 0 {
		// The rollout's own pods may wait a moment for the GPUs of a pod that is
		// terminating, as on a real node; only the canary must not.
		t.Logf("reasoning-service pods waited to be scheduled during the rollout: %s", strings.Join(other, "; "))
	}
	if !w.sawCanary() {
		t.Error("no canary pod of reasoning-service was seen")
	}
	var madeRoom bool
	for _, ev := range e.events {
		madeRoom = madeRoom || (ev.Object == "reasoning-service" && strings.HasPrefix(ev.Message, "making room for the canary"))
	}
	if !madeRoom {
		t.Error("reasoning-service's canary did not take an old pod's place (no event says so)")
	}
	vs, canaries := e.versions()
	if vs["reasoning-service"] != "1.6.0" || canaries != 0 {
		t.Fatalf("after the upgrade (steps %v): reasoning-service runs %s, %d canaries", res.Steps, vs["reasoning-service"], canaries)
	}
	if n := gpuPodsOn(t, e, node.Name, gpu); n != 2 {
		t.Fatalf("%d reasoning-service pods with %s after the upgrade, want 2", n, gpu)
	}
}

// gpuPodsOn counts the running pods of the platform on node that hold gpu.
func gpuPodsOn(t *testing.T, e *upEnv, node string, gpu corev1.ResourceName) int {
	t.Helper()
	pods, err := e.clients.Kube.CoreV1().Pods(e.p.Namespace).List(t.Context(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && !p.Spec.Containers[0].Resources.Limits.Name(gpu, resource.DecimalSI).IsZero() {
			n++
		}
	}
	return n
}

// unschedulableWatch records, from a watch of one component's pods, each pod the
// scheduler could not place (PodScheduled False), canaries apart.
type unschedulableWatch struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu            sync.Mutex
	canary, other []string
	// unschedulable and canaries are the pods recorded so far, by name.
	unschedulable, canaries map[string]bool
}

func watchUnschedulable(ctx context.Context, t *testing.T, e *upEnv, component string) *unschedulableWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	w := &unschedulableWatch{cancel: cancel, done: make(chan struct{}), unschedulable: map[string]bool{}, canaries: map[string]bool{}}
	pods := e.clients.Kube.CoreV1().Pods(e.p.Namespace)
	sel := v1alpha1.LabelName + "=" + component
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return pods.Watch(ctx, o)
		},
	}
	synced := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(w.done)
		_, _ = watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, func(cache.Store) (bool, error) {
			once.Do(func() { close(synced) })
			return false, nil
		}, func(ev watch.Event) (bool, error) {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				w.record(p)
			}
			return false, nil
		})
	}()
	select {
	case <-synced:
	case <-w.done:
		t.Fatalf("watch the pods of %s: ended before it synced", component)
	}
	return w
}

func (w *unschedulableWatch) record(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	isCanary := p.Labels[v1alpha1.LabelTrack] == v1alpha1.TrackCanary
	if isCanary {
		w.canaries[p.Name] = true
	}
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || w.unschedulable[p.Name] {
			continue
		}
		w.unschedulable[p.Name] = true
		msg := fmt.Sprintf("%s: %s %s", p.Name, c.Reason, c.Message)
		if isCanary {
			w.canary = append(w.canary, msg)
		} else {
			w.other = append(w.other, msg)
		}
	}
}

// stop ends the watch and returns what it recorded.
func (w *unschedulableWatch) stop() (canary, other []string) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.canary, w.other
}

func (w *unschedulableWatch) sawCanary() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.canaries) > 0
}
