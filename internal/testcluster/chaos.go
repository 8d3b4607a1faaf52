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
	"k8s.io/apimachinery/pkg/util/wait"
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
	// gave it, except that ChaosCrashLoop stops counting restarts and a
	// ChaosImagePull pod pulls its image at last: Running and Ready.
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
	// ChaosImagePull: the image cannot be pulled. Phase Pending (PodScheduled
	// True, Ready and ContainersReady False), the containers waiting in
	// ErrImagePull about 1 s after the pod is scheduled, then ImagePullBackOff
	// (`Back-off pulling image "<image>"`) a second later, for good; no pod IP.
	// Only a pod that has not run pulls, so set it at creation (in the pod or its
	// template, or with ChaosImage), not with SetPodChaos on a running pod.
	ChaosImagePull ChaosMode = "imagepull"
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

// chaosStage is the Stage of mode (hack/testcluster/manifests/chaos-stages.yaml)
// that ChaosImage copies; false for a mode it does not support.
func chaosStage(mode ChaosMode) (string, bool) {
	switch mode {
	case ChaosNeverReady:
		return "onto-pod-never-ready", true
	case ChaosCrashLoop:
		return "onto-pod-crashloop", true
	case ChaosOOMKilled:
		return "onto-pod-oomkilled", true
	case ChaosImagePull:
		return "onto-pod-imagepull", true
	}
	return "", false
}

// chaosLabelKey is how the chaos Stages select on ChaosLabel.
const chaosLabelKey = `.metadata.labels["` + ChaosLabel + `"]`

// SetPodChaos sets (or with ChaosNone removes) the ChaosLabel of a pod. A pod
// that already runs ignores ChaosImagePull (see there).
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

// NeverReadyImage is ChaosImage with ChaosNeverReady: every pod that starts from
// now on with a container of image is Running but never Ready.
func (c *Cluster) NeverReadyImage(t testing.TB, namespace, image string) {
	t.Helper()
	c.ChaosImage(t, namespace, image, ChaosNeverReady)
}

// ChaosImage makes every pod of namespace that starts from now on with a container
// of the given image (exact match, e.g. "registry.example/api:2.0") fail as mode
// says, until the test ends. Pods of that image in other namespaces run as usual:
// the Stage is cluster-wide and tests share the cluster, so a test that fails the
// release image all platforms use (ontology-service:1.6.0) must not fail the
// platforms of the tests beside it. Upgrade tests use it to make one component of a
// release fail its canary. Modes: ChaosNeverReady, ChaosCrashLoop (the pod is
// Ready first and crashes 3 s after it runs), ChaosOOMKilled (Ready, then OOM
// killed once about 1 s after it runs, and Ready again) and ChaosImagePull
// (Pending, never Ready: ErrImagePull, then ImagePullBackOff).
//
// It copies the mode's Stage with an image selector in place of the ChaosLabel one
// and, before returning, proves kwok applies it: a probe pod with that image in
// namespace must show the mode (see probeChaos). Pods that run already keep their
// state, except that the crashloop and oomkilled Stages also catch running pods.
func (c *Cluster) ChaosImage(t testing.TB, namespace, image string, mode ChaosMode) {
	t.Helper()
	c.ChaosImageUntil(t, namespace, image, mode)
}

// ChaosImageUntil is ChaosImage whose failure ends when stop is called (the fix of
// the image, for a test that then retries): pods started after that run as usual.
// Pods that already failed keep their state.
func (c *Cluster) ChaosImageUntil(t testing.TB, namespace, image string, mode ChaosMode) (stop func()) {
	t.Helper()
	ctx := t.Context()
	name, ok := chaosStage(mode)
	if !ok {
		t.Fatalf("ChaosImage: no Stage for chaos mode %q", mode)
	}
	stages := c.Dynamic.Resource(stageGVR())
	base, err := stages.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Stage %s (applied by hack/testcluster/up.sh): %v", name, err)
	}
	spec, err := imageStageSpec(base, namespace, image)
	if err != nil {
		t.Fatalf("Stage %s: %v", name, err)
	}
	stage := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": stageGVR().GroupVersion().String(),
		"kind":       "Stage",
		"metadata": map[string]any{
			"name":   UniqueName(t, string(mode)+"-image"),
			"labels": map[string]any{"onto.dev/test": labelValue(t.Name())},
		},
		"spec": spec,
	}}
	created, err := stages.Create(ctx, stage, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s Stage for image %s: %v", mode, image, err)
	}
	deleteStage := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := stages.Delete(ctx, created.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Stage %s: %v", created.GetName(), err)
		}
	}
	t.Cleanup(deleteStage)
	stopAndWait := func() {
		deleteStage()
		// kwok learns of the deletion through its watch: until a probe runs as usual,
		// a new pod could still fail.
		err := Poll(context.WithoutCancel(ctx), time.Minute, func(ctx context.Context) (bool, error) {
			failed, err := c.probeChaos(ctx, namespace, image, mode)
			return !failed, err
		})
		if err != nil {
			t.Errorf("kwok still applies the %s Stage for image %s after its deletion: %v", mode, image, err)
		}
	}

	// kwok learns about the Stage through a watch; until then a probe pod only
	// gets the fast pod-ready stage. A probe shows when the copy took over.
	err = Poll(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		return c.probeChaos(ctx, namespace, image, mode)
	})
	if err != nil {
		t.Fatalf("kwok did not apply the %s Stage for image %s: %v", mode, image, err)
	}
	return stopAndWait
}

// imageStageSpec is the spec of chaos Stage base selecting the pods of namespace by
// a container's image instead of by ChaosLabel; its other expressions (not
// deleted, phase...) stay.
func imageStageSpec(base *unstructured.Unstructured, namespace, image string) (map[string]any, error) {
	spec, _, err := unstructured.NestedMap(base.Object, "spec")
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	exprs, _, err := unstructured.NestedSlice(spec, "selector", "matchExpressions")
	if err != nil {
		return nil, fmt.Errorf("read selector: %w", err)
	}
	replaced := false
	for i, e := range exprs {
		if m, ok := e.(map[string]any); ok && m["key"] == chaosLabelKey {
			exprs[i] = map[string]any{"key": ".spec.containers.[].image", "operator": "In", "values": []any{image}}
			replaced = true
		}
	}
	if !replaced {
		return nil, fmt.Errorf("no selector expression on %s to replace", chaosLabelKey)
	}
	exprs = append(exprs, map[string]any{"key": ".metadata.namespace", "operator": "In", "values": []any{namespace}})
	if err := unstructured.SetNestedSlice(spec, exprs, "selector", "matchExpressions"); err != nil {
		return nil, fmt.Errorf("set selector: %w", err)
	}
	return spec, nil
}

// probeChaos starts a pod with image, waits until kwok has handled it and deletes
// it; true if it showed mode: never-ready Running and not Ready; crashloop a
// restartCount above 0 while waiting in CrashLoopBackOff; oomkilled Ready first,
// then a last state OOMKilled; imagepull a container waiting in ErrImagePull or
// ImagePullBackOff. False (try again) when it only got the fast pod-ready stage.
func (c *Cluster) probeChaos(ctx context.Context, namespace, image string, mode ChaosMode) (bool, error) {
	pods := c.Kube.CoreV1().Pods(namespace)
	grace := int64(0)
	// Restricted, so a namespace that enforces the restricted Pod Security
	// Standard (a platform's) admits it.
	probe, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: string(mode) + "-probe-"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "probe", Image: image, SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptrTo(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptrTo(true),
				RunAsUser:      ptrTo(int64(65532)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			TerminationGracePeriodSeconds: &grace,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("create probe pod: %w", err)
	}
	defer func() {
		_ = pods.Delete(context.WithoutCancel(ctx), probe.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}()
	// An imagepull probe never runs: it is handled once it shows the failed pull
	// (the copy took it) or runs (pod-ready did).
	p, err := WaitFor(ctx, c, probe, 30*time.Second, func(p *corev1.Pod) (bool, error) {
		return p.Status.Phase == corev1.PodRunning || (mode == ChaosImagePull && imagePullFailed(p)), nil
	})
	if err != nil {
		return false, err
	}
	switch mode {
	case ChaosNeverReady:
		return !PodReady(p), nil
	case ChaosImagePull:
		return p.Status.Phase != corev1.PodRunning, nil
	}
	// The crash comes 3 s, the OOM kill 1 s after the pod runs (the Stages' delay);
	// give either twice that before trying a new probe.
	readyFirst := false
	_, err = WaitFor(ctx, c, probe, 6*time.Second, func(p *corev1.Pod) (bool, error) {
		s := p.Status.ContainerStatuses
		if len(s) != 1 {
			return false, nil
		}
		last := s[0].LastTerminationState.Terminated
		switch mode {
		case ChaosCrashLoop:
			return s[0].RestartCount > 0 && s[0].State.Waiting != nil && s[0].State.Waiting.Reason == "CrashLoopBackOff", nil
		default: // ChaosOOMKilled: seen Ready before the kill, then killed
			readyFirst = readyFirst || (PodReady(p) && last == nil)
			return readyFirst && last != nil && last.Reason == "OOMKilled" && s[0].RestartCount > 0, nil
		}
	})
	if wait.Interrupted(err) {
		return false, nil
	}
	return err == nil, err
}

// imagePullFailed reports whether a container of p waits in ErrImagePull or
// ImagePullBackOff.
func imagePullFailed(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }
