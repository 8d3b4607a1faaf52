// Package testcluster connects integration tests to the project's local test
// control plane (hack/testcluster: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok fake nodes, metrics-server and a volume provisioner).
//
// `make test` starts the cluster and exports its admin kubeconfig as
// ONTO_TEST_KUBECONFIG. A package with integration tests calls Main from its
// TestMain, and each integration test starts with New:
//
//	func TestMain(m *testing.M) { testcluster.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := testcluster.New(t) // skips the test when no cluster is configured
//		ns := c.Namespace(t)    // fresh namespace, deleted when the test ends
//		...
//	}
//
// Without ONTO_TEST_KUBECONFIG (plain `go test`), New skips the calling test, so
// unit tests in the same package still run. A test of what spans clusters starts
// more control planes of its own with StartExtra.
//
// The cluster has 4 worker nodes onto-worker-0..3 in zones zone-a, zone-b, zone-c
// (16 cpu, 64Gi, 110 pods each) and, unless started with ONTO_TESTCLUSTER_GPU=0,
// the GPU node onto-gpu-0 (NodeGPU). StorageClasses standard (default) and
// fast-ssd (unless ONTO_TESTCLUSTER_FAST_SSD=0) really bind. Pods never run:
// kwok makes them Running and Ready at once, or fails them on request (see
// ChaosLabel and SetPodChaos).
package testcluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
)

// EnvKubeconfig names the environment variable with the path of the test
// cluster's admin kubeconfig. hack/test.sh (make test) sets it.
const EnvKubeconfig = "ONTO_TEST_KUBECONFIG"

// Well-known names of the test cluster (hack/testcluster/up.sh).
const (
	// StorageClassStandard is the default StorageClass.
	StorageClassStandard = "standard"
	// StorageClassFastSSD is the SSD class the article's manifests use; absent
	// when the cluster was started with ONTO_TESTCLUSTER_FAST_SSD=0.
	StorageClassFastSSD = "fast-ssd"
	// NodeGPU is the GPU node; absent when started with ONTO_TESTCLUSTER_GPU=0.
	NodeGPU = "onto-gpu-0"
	// WorkerNodePrefix starts the names of the worker nodes (onto-worker-0, ...).
	WorkerNodePrefix = "onto-worker-"
	// GPUResource is the extended resource the GPU node offers (4 of them).
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
	// GPUPresentLabel is "true" on GPU nodes.
	GPUPresentLabel = "nvidia.com/gpu.present"
	// GPUTaintKey taints GPU nodes (value "present", effect NoSchedule); GPU
	// workloads tolerate it.
	GPUTaintKey = "nvidia.com/gpu"
	// KwokNodeAnnotation (value "fake") marks a Node that kwok simulates.
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// Cluster is a connection to the test cluster. All clients use the admin
// (system:masters) identity.
type Cluster struct {
	// Kubeconfig is the path of the admin kubeconfig, for commands run by tests
	// (the plugin binary, kubectl).
	Kubeconfig string
	// Config is the REST config; copy it before changing it.
	Config *rest.Config
	// Kube is a typed client.
	Kube kubernetes.Interface
	// Dynamic is a dynamic client, for CRDs and kwok's objects.
	Dynamic dynamic.Interface
	// Client is a controller-runtime client whose scheme knows client-go's types
	// and apiextensions.k8s.io/v1.
	Client client.Client
}

// Main is the TestMain of a package with integration tests. With a cluster
// configured (EnvKubeconfig), it first checks that the cluster answers and
// exits with an error if not, so that a dead cluster fails fast instead of in
// every test. Without one, it says so once; New then skips the integration
// tests while unit tests run as usual.
//
// Main also gives controller-runtime's logger a sink (stderr, V(0) only), which
// it otherwise demands within 30 s with a stack trace; go test shows that
// output only for failing packages or with -v.
func Main(m *testing.M) {
	ctrllog.SetLogger(funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, "controller-runtime:", prefix, args)
	}, funcr.Options{}))
	path := os.Getenv(EnvKubeconfig)
	if path == "" {
		fmt.Fprintln(os.Stderr, "integration tests skipped: no cluster (run `make test`, or set "+EnvKubeconfig+")")
		os.Exit(m.Run())
	}
	if err := ping(path); err != nil {
		fmt.Fprintf(os.Stderr, "test cluster from %s=%s is not usable: %v\n", EnvKubeconfig, path, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func ping(path string) error {
	cfg, err := restConfig(path)
	if err != nil {
		return err
	}
	cfg.Timeout = 10 * time.Second
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	if _, err := kube.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("get server version: %w", err)
	}
	return nil
}

func restConfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	// The cluster is local and private to the test run: client-side throttling
	// only slows tests down.
	cfg.QPS = 200
	cfg.Burst = 400
	return cfg, nil
}

// New connects to the test cluster, or skips the test when none is configured
// (EnvKubeconfig is empty).
func New(t testing.TB) *Cluster {
	t.Helper()
	path := os.Getenv(EnvKubeconfig)
	if path == "" {
		mustrun.Skipf(t, "integration test skipped: no cluster (run `make test`, or set %s)", EnvKubeconfig)
	}
	return connect(t, path)
}

// connect connects to the cluster of the admin kubeconfig at path.
func connect(t testing.TB, path string) *Cluster {
	t.Helper()
	cfg, err := restConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("create typed client: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("create dynamic client: %v", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatalf("build scheme: %v", err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatalf("build scheme: %v", err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("create controller-runtime client: %v", err)
	}
	return &Cluster{Kubeconfig: path, Config: cfg, Kube: kube, Dynamic: dyn, Client: cl}
}

// Kubectl is the path of the kubectl built with the cluster (its version), for tests
// that check what kubectl itself does with the plugin's output: bin/kubectl beside the
// kubeconfig, where hack/testcluster/up.sh links it, else the one in
// ONTO_TESTCLUSTER_BIN (hack/testcluster/build.sh's directory). The test is skipped
// when neither exists: another kubectl may differ in what it sends.
func (c *Cluster) Kubectl(t testing.TB) string {
	t.Helper()
	candidates := []string{filepath.Join(filepath.Dir(c.Kubeconfig), "bin", "kubectl")}
	if dir := os.Getenv("ONTO_TESTCLUSTER_BIN"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, "kubectl"))
	}
	for _, path := range candidates {
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return path
		}
	}
	mustrun.Skipf(t, "no kubectl of the test cluster at %s", strings.Join(candidates, " or "))
	return ""
}

// Namespace creates a namespace with a unique name for the test and deletes it
// when the test ends. It returns once the namespace's default ServiceAccount
// exists, so pods can be created in it right away.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   UniqueName(t, "t"),
		Labels: map[string]string{"onto.dev/test": labelValue(t.Name())},
	}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// Not waiting for the namespace to go: that only slows the test down.
		err := c.Kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	err := Poll(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := c.Kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("wait for the default ServiceAccount of namespace %s: %v", ns.Name, err)
	}
	return ns.Name
}

// NewNamespaceName returns a unique namespace name that does not exist yet, for tests
// of what creates a namespace; the namespace is deleted, if it exists, when the test
// ends.
func (c *Cluster) NewNamespaceName(t testing.TB) string {
	t.Helper()
	name := UniqueName(t, "n")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	return name
}

// UniqueName returns prefix, a short form of the test's name and a random
// suffix, as a valid DNS label (at most 63 characters). Use it for
// cluster-scoped objects (CRDs, ClusterRoles, Nodes), which tests running in
// parallel would otherwise share.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	suffix := strings.ToLower(rand.Text()[:6])
	name := dnsLabel(t.Name())
	if max := 63 - len(prefix) - len(suffix) - 2; len(name) > max {
		name = strings.Trim(name[:max], "-")
	}
	if name == "" {
		return prefix + "-" + suffix
	}
	return prefix + "-" + name + "-" + suffix
}

// dnsLabel lowercases s and turns everything but [a-z0-9] into single dashes.
func dnsLabel(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// labelValue makes a valid label value (at most 63 characters) from s.
func labelValue(s string) string {
	v := dnsLabel(s)
	if len(v) > 63 {
		v = strings.Trim(v[:63], "-")
	}
	return v
}

// NewNode adds a fake kwok node of 16 cpu / 64Gi / 110 pods with the given
// labels and taints (on top of kubernetes.io/hostname and the zone label
// "zone-t"), waits until it is Ready and deletes it when the test ends. Use
// it for node failures (SetNodeNotReady): changing a shared worker node would
// disturb tests running in parallel. To keep other tests' pods off it, pass a
// NoSchedule taint. Options (WithAllocatable) change the node before it is
// created.
func (c *Cluster) NewNode(t testing.TB, labels map[string]string, taints []corev1.Taint, opts ...NodeOption) *corev1.Node {
	t.Helper()
	ctx := t.Context()
	name := UniqueName(t, "node")
	l := map[string]string{
		corev1.LabelHostname:           name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         "amd64",
		corev1.LabelTopologyZone:       "zone-t",
		"type":                         "kwok",
		"onto.dev/test-node":           "true",
		corev1.LabelInstanceTypeStable: "onto.standard-16",
	}
	for k, v := range labels {
		l[k] = v
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("16"),
		corev1.ResourceMemory:           resource.MustParse("64Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: l,
			Annotations: map[string]string{
				KwokNodeAnnotation:                     "fake",
				"metrics.k8s.io/resource-metrics-path": "/metrics/nodes/" + name + "/metrics/resource",
			},
		},
		Spec:   corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
	}
	for _, o := range opts {
		o(node)
	}
	if _, err := c.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete node %s: %v", name, err)
		}
	})
	got, err := WaitFor(ctx, c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, time.Minute,
		func(n *corev1.Node) (bool, error) { return NodeReady(n), nil })
	if err != nil {
		t.Fatalf("wait for node %s to be Ready: %v", name, err)
	}
	return got
}

// NodeOption changes a node NewNode is about to create.
type NodeOption func(*corev1.Node)

// WithAllocatable adds res to the node's capacity and allocatable (kwok keeps
// both as created): an extended resource of the test's own, such as
// "example.com/test-gpu-<unique>", gives it a node that parallel tests cannot
// fill. A resource NewNode sets already (cpu, memory, pods) is replaced.
func WithAllocatable(res corev1.ResourceList) NodeOption {
	return func(n *corev1.Node) {
		for name, q := range res {
			n.Status.Capacity[name] = q.DeepCopy()
			n.Status.Allocatable[name] = q.DeepCopy()
		}
	}
}
