package testcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
)

// EnvRealNodes names the environment variable with the number of real nodes the
// cluster was started with (hack/testcluster/nodes.sh). `make test` sets it; a test
// that needs real nodes then fails when the cluster has none, instead of skipping.
const EnvRealNodes = "ONTO_TESTCLUSTER_REAL_NODES"

// Names of the real nodes' world (hack/testcluster/nodes.sh).
const (
	// RealNodeLabel is "real" on the nodes a kubelet with containerd runs.
	RealNodeLabel = "onto.dev/node"
	// RealNodeTaintKey taints real nodes (value "true", NoSchedule), so that only
	// pods meant for them land there; RealNodes.Place adds the toleration.
	RealNodeTaintKey = "onto.dev/real-node"
	// ImageRegistry is the registry host name the real nodes pull test images from:
	// containerd maps it to the cluster's local registry, so references carry no port.
	ImageRegistry = "registry.onto.test"
)

// RealNodes are the nodes of the cluster on which containers really run.
type RealNodes struct {
	// Names of the nodes, sorted (onto-real-0, onto-real-1, ...).
	Names []string
	// Registry is the address (host:port) of the registry the nodes pull from, for
	// pushing: what the nodes ask ImageRegistry, ghcr.io or registry.k8s.io for is
	// served from it.
	Registry string
}

// RealTestPrefix starts the name of every test that needs real nodes. `make test`
// runs the other tests first, on kwok's nodes alone, then starts the real nodes and
// runs these: the kubelets, kube-proxies and kube-routers would otherwise follow
// every simulated pod the other tests create, and slowed the suite by half.
const RealTestPrefix = "TestReal"

// RealNodes returns the cluster's real nodes, each Ready. It fails the test when the
// cluster was started to have real nodes (EnvRealNodes, set by `make test`) and has
// none; otherwise it skips the test with one line naming what is missing. A test
// whose name does not start with RealTestPrefix fails: make test would run it
// before the nodes are up.
func (c *Cluster) RealNodes(t testing.TB) *RealNodes {
	t.Helper()
	if !strings.HasPrefix(t.Name(), RealTestPrefix) {
		t.Fatalf("%s needs real nodes, so its name must start with %q: make test starts the nodes after the other tests and then runs only those (hack/test.sh)", t.Name(), RealTestPrefix)
	}
	want := os.Getenv(EnvRealNodes)
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if want != "" && want != "0" {
			t.Fatalf("real nodes missing although %s=%s: %s (hack/testcluster/nodes.sh; its logs are in the cluster's nodes/logs)", EnvRealNodes, want, msg)
		}
		mustrun.Skipf(t, "real-node test skipped: %s (make test starts them as root; %s=0 leaves them out)", msg, EnvRealNodes)
	}
	nodes, err := c.Kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: RealNodeLabel + "=real"})
	if err != nil {
		t.Fatalf("list real nodes: %v", err)
	}
	if len(nodes.Items) == 0 {
		missing("the cluster has no node labelled %s=real", RealNodeLabel)
	}
	r := &RealNodes{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !NodeReady(n) {
			t.Fatalf("real node %s is not Ready: %s", n.Name, nodeConditions(n))
		}
		r.Names = append(r.Names, n.Name)
	}
	sort.Strings(r.Names)
	reg, err := os.ReadFile(filepath.Join(filepath.Dir(c.Kubeconfig), "nodes", "registry"))
	if err != nil {
		missing("no registry address beside the kubeconfig: %v", err)
	}
	r.Registry = strings.TrimSpace(string(reg))
	return r
}

func nodeConditions(n *corev1.Node) string {
	var parts []string
	for _, c := range n.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Message))
	}
	return strings.Join(parts, "; ")
}

// Toleration lets a pod onto the real nodes.
func (r *RealNodes) Toleration() corev1.Toleration {
	return corev1.Toleration{Key: RealNodeTaintKey, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}
}

// Place puts spec on node (one of Names), or on any real node when node is empty.
func (r *RealNodes) Place(spec *corev1.PodSpec, node string) {
	spec.Tolerations = append(spec.Tolerations, r.Toleration())
	if node != "" {
		spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
		return
	}
	spec.NodeSelector = map[string]string{RealNodeLabel: "real"}
}

// Image is the reference, as the nodes pull it, of repository:tag in ImageRegistry.
func (r *RealNodes) Image(repositoryTag string) string {
	return ImageRegistry + "/" + repositoryTag
}

// RestrictedSecurityContext is what the restricted Pod Security Standard asks of a
// container: non-root, no privilege escalation, no capabilities, RuntimeDefault seccomp.
func RestrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// WaitPodReady waits until the pod is Ready and returns it. On failure the error
// reads as `kubectl describe pod` and `kubectl logs` would show it: phase,
// conditions, each container's state, the pod's Events and the containers' last
// log lines.
func (c *Cluster) WaitPodReady(ctx context.Context, ns, name string, timeout time.Duration) (*corev1.Pod, error) {
	pod, err := WaitFor(ctx, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, timeout,
		func(p *corev1.Pod) (bool, error) {
			if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
				return false, fmt.Errorf("pod ended %s", p.Status.Phase)
			}
			return PodReady(p), nil
		})
	if err != nil {
		return pod, fmt.Errorf("pod %s/%s not Ready: %w\n%s", ns, name, err, c.DescribePod(ns, name))
	}
	return pod, nil
}

// DescribePod tells what a user would look at for a pod that does not run: its
// phase and node, conditions, each container's state and restarts, its Events and
// the last 20 log lines of each container (and of its previous run).
func (c *Cluster) DescribePod(ns, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var b strings.Builder
	pod, err := c.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "  get pod: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "  Pod %s/%s on node %q: phase %s %s\n", ns, name, pod.Spec.NodeName, pod.Status.Phase, pod.Status.Reason)
	for _, cond := range pod.Status.Conditions {
		fmt.Fprintf(&b, "    condition %s=%s %s %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		fmt.Fprintf(&b, "    container %s: ready=%t restarts=%d %s\n", s.Name, s.Ready, s.RestartCount, containerState(s.State))
		if s.LastTerminationState.Terminated != nil {
			fmt.Fprintf(&b, "      last: %s\n", containerState(s.LastTerminationState))
		}
	}
	events, err := c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.kind", "Pod"),
		fields.OneTermEqualSelector("involvedObject.name", name)).String()})
	if err == nil {
		sort.Slice(events.Items, func(i, j int) bool {
			return events.Items[i].LastTimestamp.Before(&events.Items[j].LastTimestamp)
		})
		b.WriteString("    Events:\n")
		for _, e := range events.Items {
			fmt.Fprintf(&b, "      %s %s (x%d, %s): %s\n", e.Type, e.Reason, e.Count, e.Source.Component, e.Message)
		}
	}
	for _, s := range statuses {
		for _, previous := range []bool{false, true} {
			if previous && s.RestartCount == 0 {
				continue
			}
			logs := c.containerLogs(ctx, ns, name, s.Name, previous)
			if logs == "" {
				continue
			}
			fmt.Fprintf(&b, "    logs of %s (previous=%t):\n", s.Name, previous)
			for _, line := range strings.Split(strings.TrimRight(logs, "\n"), "\n") {
				fmt.Fprintf(&b, "      %s\n", line)
			}
		}
	}
	return b.String()
}

func (c *Cluster) containerLogs(ctx context.Context, ns, pod, container string, previous bool) string {
	req := c.Kube.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous, TailLines: ptr.To[int64](20)})
	rc, err := req.Stream(ctx)
	if err != nil {
		if apierrors.IsBadRequest(err) {
			return ""
		}
		return "(logs: " + err.Error() + ")"
	}
	defer rc.Close()
	data, _ := io.ReadAll(io.LimitReader(rc, 64<<10))
	return string(data)
}

func containerState(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running since " + s.Running.StartedAt.Format(time.RFC3339)
	case s.Waiting != nil:
		return fmt.Sprintf("waiting %s: %s", s.Waiting.Reason, s.Waiting.Message)
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %s (exit %d): %s", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Message)
	}
	return "no state"
}
