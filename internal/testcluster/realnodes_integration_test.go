package testcluster_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// toolsImage is the test image with a shell and busybox's network tools (nc, wget,
// nslookup) beside redis: internal/testimages builds it from Debian's packages.
const toolsImage = "onto/redis:7.0"

// TestRealNodesJoinTheCluster: every real node registers with containerd as its
// runtime, an address on the node network, the taint that keeps other pods off, and a
// kubelet that refuses anonymous clients; the API server is the `kubernetes`
// Service's endpoint, as pods in a cluster expect.
func TestRealNodesJoinTheCluster(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	real := c.RealNodes(t)
	if len(real.Names) < 2 {
		t.Fatalf("real nodes: got %v, want at least 2 (node loss needs a second one)", real.Names)
	}
	ctx := t.Context()
	for _, name := range real.Names {
		node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rt := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(rt, "containerd://2.") {
			t.Errorf("node %s: container runtime %q, want containerd://2.x", name, rt)
		}
		if kv := node.Status.NodeInfo.KubeletVersion; kv != "v1.37.2" {
			t.Errorf("node %s: kubelet %q, want v1.37.2", name, kv)
		}
		var ip string
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		if parsed := net.ParseIP(ip); parsed == nil || parsed.IsLoopback() {
			t.Fatalf("node %s: InternalIP %q, want an address on the node network", name, ip)
		}
		tainted := false
		for _, taint := range node.Spec.Taints {
			tainted = tainted || taint.Key == testcluster.RealNodeTaintKey && taint.Effect == corev1.TaintEffectNoSchedule
		}
		if !tainted {
			t.Errorf("node %s: no %s NoSchedule taint: %v", name, testcluster.RealNodeTaintKey, node.Spec.Taints)
		}
		// No client certificate: the kubelet must say 401, not serve.
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // only the status code is read
		}}
		resp, err := client.Get(fmt.Sprintf("https://%s:%d/pods", ip, node.Status.DaemonEndpoints.KubeletEndpoint.Port))
		if err != nil {
			t.Fatalf("node %s: GET /pods of its kubelet: %v", name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("node %s: anonymous GET /pods of its kubelet: %s, want 401 Unauthorized", name, resp.Status)
		}
	}
	eps, err := c.Kube.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || len(eps.Subsets) == 0 || len(eps.Subsets[0].Addresses) == 0 {
		t.Fatalf("the kubernetes Service has no endpoints (%v): pods could not reach the API server", err)
	}
	if got := eps.Subsets[0].Addresses[0].IP; !strings.Contains(c.Config.Host, got) {
		t.Errorf("kubernetes Service endpoint %s, want the API server's address (%s)", got, c.Config.Host)
	}
}

// toolsPod is a pod of the tools image on node (any real node when empty), running
// script under sh, restricted as the platform's pods are.
func toolsPod(real *testcluster.RealNodes, ns, name, node string, labels map[string]string, script string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999),
			},
			Containers: []corev1.Container{{
				Name:            "tools",
				Image:           real.Image(toolsImage),
				Command:         []string{"sh", "-c", script},
				SecurityContext: testcluster.RestrictedSecurityContext(),
				VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
			}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	real.Place(&pod.Spec, node)
	return pod
}

func createPod(t *testing.T, c *testcluster.Cluster, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	if _, err := c.Kube.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	got, err := c.WaitPodReady(t.Context(), pod.Namespace, pod.Name, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// execIn runs command in the pod's first container with `kubectl exec`, as a user
// would, and returns its stdout; the error carries stderr.
func execIn(ctx context.Context, t *testing.T, c *testcluster.Cluster, ns, pod string, command ...string) (string, error) {
	args := append([]string{"--kubeconfig", c.Kubeconfig, "exec", "-n", ns, pod, "--"}, command...)
	cmd := exec.CommandContext(ctx, c.Kubectl(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl exec %s/%s -- %v: %w (stderr: %s)", ns, pod, command, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// TestRealPodProbesLogsExecDNS: on a real node a readiness probe is really executed
// (the pod leaves the ready state when the file it checks goes), `kubectl logs` and
// `exec` work, and cluster DNS resolves a Service name from inside a pod.
func TestRealPodProbesLogsExecDNS(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	real := c.RealNodes(t)
	ns := c.Namespace(t)
	ctx := t.Context()
	pod := toolsPod(real, ns, "probe", "", nil, "echo started as $(id -u); touch /tmp/ready; exec sleep 3600")
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	createPod(t, c, pod)

	logs, err := c.Kube.CoreV1().Pods(ns).GetLogs("probe", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), "started as 999") {
		t.Fatalf("logs of the pod: %q (%v), want \"started as 999\"", logs, err)
	}
	if _, err := execIn(ctx, t, c, ns, "probe", "rm", "/tmp/ready"); err != nil {
		t.Fatal(err)
	}
	_, err = testcluster.WaitFor(ctx, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}, 30*time.Second,
		func(p *corev1.Pod) (bool, error) { return !testcluster.PodReady(p), nil })
	if err != nil {
		t.Fatalf("the pod stayed Ready after its readiness file was removed: the probe did not run: %v\n%s", err, c.DescribePod(ns, "probe"))
	}
	out, err := execIn(ctx, t, c, ns, "probe", "busybox", "nslookup", "kubernetes.default.svc.cluster.local")
	if err != nil || !strings.Contains(out, "10.96.0.1") {
		t.Fatalf("nslookup kubernetes.default.svc.cluster.local in a pod: %q (%v), want 10.96.0.1", out, err)
	}
}

// TestRealNetworkPolicyDropsPackets: with a policy that admits only its own namespace,
// a pod of another namespace cannot open a TCP connection to the server (it times
// out: kube-router drops the packet), while a pod of the server's namespace on the
// other node can; deleting the policy opens it again.
func TestRealNetworkPolicyDropsPackets(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	real := c.RealNodes(t)
	ctx := t.Context()
	nsServer, nsOther := c.Namespace(t), c.Namespace(t)
	server := createPod(t, c, toolsPod(real, nsServer, "server", real.Names[0], map[string]string{"app": "server"},
		"while true; do echo pong | nc -l -p 8080; done"))
	friend := createPod(t, c, toolsPod(real, nsServer, "friend", real.Names[len(real.Names)-1], nil, "exec sleep 3600"))
	stranger := createPod(t, c, toolsPod(real, nsOther, "stranger", real.Names[len(real.Names)-1], nil, "exec sleep 3600"))

	connect := func(from *corev1.Pod) error {
		_, err := execIn(ctx, t, c, from.Namespace, from.Name, "sh", "-c", "echo ping | nc -w 3 "+server.Status.PodIP+" 8080")
		return err
	}
	// Before any policy both connect: the network works across nodes.
	for _, p := range []*corev1.Pod{friend, stranger} {
		if err := connect(p); err != nil {
			t.Fatalf("without a NetworkPolicy, %s/%s cannot reach the server on %s: %v", p.Namespace, p.Name, server.Spec.NodeName, err)
		}
	}
	policy := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsServer, Name: "same-namespace"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "server"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(8080))}},
			}},
		},
	}
	if _, err := c.Kube.NetworkingV1().NetworkPolicies(nsServer).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-router applies a policy within a second or two of its creation.
	err := testcluster.Poll(ctx, 30*time.Second, func(context.Context) (bool, error) { return connect(stranger) != nil, nil })
	if err != nil {
		t.Fatalf("a pod of namespace %s still reaches the server 30 s after a policy admitting only %s", nsOther, nsServer)
	}
	if err := connect(friend); err != nil {
		t.Fatalf("with the policy, a pod of the server's own namespace cannot reach it: %v", err)
	}
	if err := c.Kube.NetworkingV1().NetworkPolicies(nsServer).Delete(ctx, policy.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = testcluster.Poll(ctx, 30*time.Second, func(context.Context) (bool, error) { return connect(stranger) == nil, nil })
	if err != nil {
		t.Fatalf("the policy is deleted, but the pod of %s still cannot reach the server", nsOther)
	}
}
