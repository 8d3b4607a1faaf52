package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/internal/image"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
)

// TestRealPodWatch: the operator as users run it. The image this repository
// builds goes to the cluster's registry as buildinfo's default repository and the
// binary's version, `watch install --apply` installs the watch with that default
// image, and the kubelet of a real node pulls and starts it: read-only root, uid 65532,
// in-cluster configuration and its ServiceAccount token through the kubernetes
// Service, leader election. It then repairs a deleted Deployment and a changed image
// of the platform it watches, and goes on doing so after its own pod is deleted.
func TestRealPodWatch(t *testing.T) {
	c := testcluster.New(t)
	real := c.RealNodes(t)
	ctx := t.Context()
	version := "v0.0.0-realnode"
	plugin, ref := buildWatchImage(t, real, version)

	platformNS := c.Namespace(t)
	watchNS := c.NewNamespaceName(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, plugin, append(args, "--kubeconfig", c.Kubeconfig)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl onto %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		// The cluster-scoped objects of the install (ClusterRoles, bindings, policies).
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, plugin, "watch", "install", "-n", watchNS, "--namespaces", platformNS, "-o", "json").Output()
		if err != nil {
			return
		}
		var list struct {
			Items []struct {
				Kind     string
				Metadata struct{ Name, Namespace string }
			}
		}
		if json.Unmarshal(out, &list) != nil {
			return
		}
		for _, o := range list.Items {
			if o.Metadata.Namespace == "" && o.Kind != "Namespace" {
				_ = exec.CommandContext(ctx, c.Kubectl(t), "--kubeconfig", c.Kubeconfig, "delete", "--ignore-not-found", o.Kind, o.Metadata.Name).Run()
			}
		}
	})

	// The platform first (the CLI installs the CRD); its pods run on the kwok nodes.
	run("apply", "-f", platformFile(t, platformNS, ""))
	if out := run("watch", "install", "-n", watchNS, "--namespaces", platformNS, "--replicas", "1", "-o", "yaml"); !strings.Contains(out, "image: "+ref) {
		t.Fatalf("watch install does not default to the image of its version %s:\n%s", ref, out)
	}
	run("watch", "install", "-n", watchNS, "--namespaces", platformNS, "--replicas", "1", "--apply")
	// On the real nodes: what a team with a dedicated node pool does with a patch.
	placement, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]string{testcluster.RealNodeLabel: "real"},
		"tolerations":  []corev1.Toleration{real.Toleration()},
	}}}})
	if _, err := c.Kube.AppsV1().Deployments(watchNS).Patch(ctx, "kubectl-onto-watch", types.StrategicMergePatchType, placement, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pod := waitWatchPod(t, c, watchNS, "")
	t.Logf("watch pod %s Ready on %s %.1fs after the patch (image pulled from the registry)", pod.Name, pod.Spec.NodeName, time.Since(start).Seconds())
	if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("the watch's container has no read-only root filesystem: %+v", sc)
	}
	if uid := pod.Spec.SecurityContext.RunAsUser; uid == nil || *uid != image.UID {
		t.Errorf("the watch's pod runs as %v, want %d", uid, image.UID)
	}

	repair := func(what string, deployment string, change func() error, repaired func(*appsv1.Deployment) bool) {
		t.Helper()
		if err := change(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := testcluster.Poll(ctx, 90*time.Second, func(ctx context.Context) (bool, error) {
			d, err := c.Kube.AppsV1().Deployments(platformNS).Get(ctx, deployment, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && repaired(d), err
		})
		if err != nil {
			pods, _ := c.Kube.CoreV1().Pods(watchNS).List(ctx, metav1.ListOptions{})
			var describe strings.Builder
			for _, p := range pods.Items {
				describe.WriteString(c.DescribePod(watchNS, p.Name))
			}
			t.Fatalf("the watch did not repair %s within 90 s: %v\n%s", what, err, describe.String())
		}
		t.Logf("%s repaired by the in-cluster watch in %.1fs", what, time.Since(start).Seconds())
	}
	deleteDeployment := func(name string) func() error {
		return func() error {
			return c.Kube.AppsV1().Deployments(platformNS).Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
	exists := func(*appsv1.Deployment) bool { return true }
	repair("a deleted Deployment", "gateway", deleteDeployment("gateway"), exists)

	live, err := c.Kube.AppsV1().Deployments(platformNS).Get(ctx, "gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := live.Spec.Template.Spec.Containers[0].Image
	changeImage := func() error {
		p := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"` + live.Spec.Template.Spec.Containers[0].Name + `","image":"registry.example/changed:1"}]}}}}`)
		_, err := c.Kube.AppsV1().Deployments(platformNS).Patch(ctx, "gateway", types.StrategicMergePatchType, p, metav1.PatchOptions{FieldManager: "someone-else"})
		return err
	}
	repair("a changed image", "gateway", changeImage, func(d *appsv1.Deployment) bool {
		return d.Spec.Template.Spec.Containers[0].Image == want
	})

	// Its own pod deleted: the Deployment's next pod takes the lease and goes on.
	if err := c.Kube.CoreV1().Pods(watchNS).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next := waitWatchPod(t, c, watchNS, pod.Name)
	t.Logf("replacement watch pod %s Ready on %s", next.Name, next.Spec.NodeName)
	repair("a Deployment deleted after the watch's pod was replaced", "gateway", deleteDeployment("gateway"), exists)

	// Its memory as the kubelet sees it (the working set `kubectl top` shows), read
	// by metrics-server from the real node's kubelet.
	var working resource.Quantity
	err = testcluster.Poll(ctx, 90*time.Second, func(ctx context.Context) (bool, error) {
		m, err := c.Dynamic.Resource(schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}).
			Namespace(watchNS).Get(ctx, next.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		containers, _ := m.Object["containers"].([]any)
		for _, ct := range containers {
			usage, _ := ct.(map[string]any)["usage"].(map[string]any)
			if mem, ok := usage["memory"].(string); ok {
				working = resource.MustParse(mem)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no pod metrics for the watch from the real node's kubelet within 90 s: %v", err)
	}
	t.Logf("watch working set (1 platform): %.1f MiB", float64(working.Value())/(1<<20))
}

// buildWatchImage builds kubectl-onto for this machine's platform at version, the
// watch's image from it (internal/image, as make image does), pushes that to the
// cluster's registry as buildinfo's default repository would be pulled, and returns
// the binary and the image reference the binary defaults to.
func buildWatchImage(t *testing.T, real *testcluster.RealNodes, version string) (plugin, ref string) {
	t.Helper()
	ctx := t.Context()
	moduleDir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bins, err := image.Compile(ctx, image.CompileOptions{
		ModuleDir: moduleDir,
		OutDir:    t.TempDir(),
		LDFlags:   "-s -w -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.Version=" + version,
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
	})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := image.Build(image.Options{Binaries: bins, Version: version, Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// ghcr.io/<repo> is what the nodes ask for; the registry serves it under <repo>.
	repo := strings.TrimPrefix(buildinfo.DefaultImageRepository, "ghcr.io/")
	start := time.Now()
	if _, err := image.Push(ctx, real.Registry+"/"+repo, version, idx); err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed the watch's image to %s/%s:%s in %.2fs", real.Registry, repo, version, time.Since(start).Seconds())
	return bins[0].Path, buildinfo.DefaultImageRepository + ":" + version
}

// waitWatchPod waits for a Ready pod of the watch on a real node, other than not.
func waitWatchPod(t *testing.T, c *testcluster.Cluster, ns, not string) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	err := testcluster.Poll(t.Context(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			// A pod of the Deployment's first template, on a kwok node, may still be there.
			onReal := strings.HasPrefix(p.Spec.NodeName, "onto-real-")
			if p.Name != not && onReal && p.DeletionTimestamp == nil && testcluster.PodReady(p) {
				found = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		pods, _ := c.Kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		var b strings.Builder
		for _, p := range pods.Items {
			b.WriteString(c.DescribePod(ns, p.Name))
		}
		t.Fatalf("no Ready watch pod in %s within 2 min: %v\n%s", ns, err, b.String())
	}
	return found
}
