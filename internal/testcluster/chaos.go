package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ChaosLabel on a pod (or in a pod template) switches on a simulated failure;
// its value is a ChaosMode. The kwok Stages behind it are in
// hack/testcluster/manifests/chaos-stages.yaml.
const ChaosLabel = "chaos.onto.dev/mode"

// ChaosMode is a simulated pod failure.
type ChaosMode string

// The failure modes. A mode in a pod template applies to every pod of the
// workload, replacements included.
const (
	// ChaosNone removes the label (SetPodChaos). A pod keeps the state a mode
	// gave it, except that ChaosCrashLoop stops counting restarts.
	ChaosNone ChaosMode = ""
	// ChaosCrashLoop: Running, not Ready, container waiting in
	// CrashLoopBackOff, restartCount rising every 3 s, BackOff events.
	ChaosCrashLoop ChaosMode = "crashloop"
	// ChaosOOMKilled: once, about 1 s after the pod runs: restartCount 1 and
	// lastState.terminated OOMKilled with exit code 137; Running and Ready again.
	ChaosOOMKilled ChaosMode = "oomkilled"
	// ChaosEvicted: about 1 s after the pod runs, phase Failed with reason
	// Evicted and a DisruptionTarget condition, as the kubelet leaves a pod it
	// evicted under node pressure; controllers create a replacement.
	ChaosEvicted ChaosMode = "evicted"
	// ChaosNeverReady: Running with containers started but never Ready, like a
	// failing readiness probe.
	ChaosNeverReady ChaosMode = "never-ready"
)

// Simulated resource usage, read by kwok's ClusterResourceUsage and served to
// metrics-server (so `kubectl top` and HPAs see it). Values are quantities
// ("180m", "64Mi") and apply to each container of the pod; without them a
// container uses 1m CPU and 1Mi memory. metrics-server scrapes every 15 s, so
// an HPA reacts after about a minute.
const (
	UsageCPUAnnotation    = "kwok.x-k8s.io/usage-cpu"
	UsageMemoryAnnotation = "kwok.x-k8s.io/usage-memory"
)

// NodeNotReadyLabel is the upstream kwok node-not-ready stage's label: "true"
// turns the node's Ready condition False (reason nodeFailed); removing it
// makes the node Ready again. See SetNodeNotReady.
const NodeNotReadyLabel = "node-not-ready.stage.kwok.x-k8s.io"

// stageGVR is kwok's Stage resource (cluster-scoped).
func stageGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}
}

// neverReadyStage is the Stage of ChaosNeverReady that NeverReadyImage copies.
const neverReadyStage = "onto-pod-never-ready"

// SetPodChaos sets (or with ChaosNone removes) the ChaosLabel of a pod.
func (c *Cluster) SetPodChaos(ctx context.Context, namespace, pod string, mode ChaosMode) error {
	var value any = string(mode)
	if mode == ChaosNone {
		value = nil // JSON merge patch: null deletes the key
	}
	if err := c.patchMeta(ctx, "pods", namespace, pod, "labels", ChaosLabel, value); err != nil {
		return fmt.Errorf("set chaos mode %q on pod %s/%s: %w", mode, namespace, pod, err)
	}
	return nil
}

// SetPodUsage sets the simulated CPU and memory usage of a pod's containers
// (see UsageCPUAnnotation); an empty value leaves that one unchanged. For a
// workload, put the annotations in its pod template instead.
func (c *Cluster) SetPodUsage(ctx context.Context, namespace, pod, cpu, memory string) error {
	ann := map[string]any{}
	if cpu != "" {
		ann[UsageCPUAnnotation] = cpu
	}
	if memory != "" {
		ann[UsageMemoryAnnotation] = memory
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	if _, err := c.Kube.CoreV1().Pods(namespace).Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("set usage of pod %s/%s: %w", namespace, pod, err)
	}
	return nil
}

// SetNodeNotReady makes kwok report the node NotReady (Ready=False, reason
// nodeFailed; the node lifecycle controller then taints it
// node.kubernetes.io/not-ready) or, with notReady false, Ready again. The
// lifecycle controller also marks the node's pods not Ready, and they stay so,
// so prefer a node of your own (NewNode) over a shared worker.
func (c *Cluster) SetNodeNotReady(ctx context.Context, node string, notReady bool) error {
	var value any
	if notReady {
		value = "true"
	}
	if err := c.patchMeta(ctx, "nodes", "", node, "labels", NodeNotReadyLabel, value); err != nil {
		return fmt.Errorf("set node %s not-ready=%t: %w", node, notReady, err)
	}
	return nil
}

// patchMeta merge-patches one label or annotation; a nil value deletes it.
func (c *Cluster) patchMeta(ctx context.Context, resource, namespace, name, field, key string, value any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{field: map[string]any{key: value}}})
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	switch resource {
	case "pods":
		_, err = c.Kube.CoreV1().Pods(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case "nodes":
		_, err = c.Kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	default:
		err = fmt.Errorf("unsupported resource %q", resource)
	}
	return err
}

// NeverReadyImage makes every pod that starts from now on with a container of
// the given image (exact match, e.g. "registry.example/api:2.0") Running but
// never Ready, in any namespace, until the test ends. Upgrade tests use it to
// make one component of a release fail its rollout.
//
// It copies the ChaosNeverReady Stage with an image selector and, before
// returning, proves kwok applies it: a probe pod with that image in namespace
// must come up not Ready. Pods that are already Ready stay Ready.
func (c *Cluster) NeverReadyImage(t testing.TB, namespace, image string) {
	t.Helper()
	ctx := t.Context()
	stages := c.Dynamic.Resource(stageGVR())
	base, err := stages.Get(ctx, neverReadyStage, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Stage %s (applied by hack/testcluster/up.sh): %v", neverReadyStage, err)
	}
	exprs, found, err := unstructured.NestedSlice(base.Object, "spec", "selector", "matchExpressions")
	if err != nil || !found || len(exprs) == 0 {
		t.Fatalf("Stage %s has no selector expressions (found %t): %v", neverReadyStage, found, err)
	}
	// The first expression selects by ChaosLabel; select by image instead.
	exprs[0] = map[string]any{"key": ".spec.containers.[].image", "operator": "In", "values": []any{image}}
	spec, _, err := unstructured.NestedMap(base.Object, "spec")
	if err != nil {
		t.Fatalf("read Stage %s: %v", neverReadyStage, err)
	}
	if err := unstructured.SetNestedSlice(spec, exprs, "selector", "matchExpressions"); err != nil {
		t.Fatalf("build Stage: %v", err)
	}
	stage := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": stageGVR().GroupVersion().String(),
		"kind":       "Stage",
		"metadata": map[string]any{
			"name":   UniqueName(t, "never-ready-image"),
			"labels": map[string]any{"onto.dev/test": labelValue(t.Name())},
		},
		"spec": spec,
	}}
	created, err := stages.Create(ctx, stage, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create never-ready Stage for image %s: %v", image, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := stages.Delete(ctx, created.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Stage %s: %v", created.GetName(), err)
		}
	})

	// kwok learns about the Stage through a watch; until then the fast
	// pod-ready stage would still win. A probe pod shows when it took over.
	err = Poll(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		return c.probeNeverReady(ctx, namespace, image)
	})
	if err != nil {
		t.Fatalf("kwok did not apply the never-ready Stage for image %s: %v", image, err)
	}
}

// probeNeverReady starts a pod with image, waits until kwok has handled it and
// deletes it; true if it came up Running and not Ready.
func (c *Cluster) probeNeverReady(ctx context.Context, namespace, image string) (bool, error) {
	pods := c.Kube.CoreV1().Pods(namespace)
	grace := int64(0)
	probe, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "never-ready-probe-"},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "probe", Image: image}},
			TerminationGracePeriodSeconds: &grace,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("create probe pod: %w", err)
	}
	defer func() {
		_ = pods.Delete(context.WithoutCancel(ctx), probe.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}()
	p, err := WaitFor(ctx, c, probe, 30*time.Second, func(p *corev1.Pod) (bool, error) {
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return false, err
	}
	return !PodReady(p), nil
}
