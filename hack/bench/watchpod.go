/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/image"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// watchPodVersion tags the image the bench builds: the binary's version, so that
// `watch install` defaults to it, as a release's binary defaults to its own image.
const watchPodVersion = "v0.0.0-bench"

// watchPodSamples is how many working-set readings are taken once the watch is
// synced, one per metrics-server scrape (15 s).
const watchPodSamples = 5

// measureWatchPods measures the watch as users run it, a pod on a real node started
// by `watch install --apply` from the image this repository builds, over fleets of
// each size of tenant platforms: the time from install to Ready (caches synced), one
// drift repair, and the working set as the kubelet reports it (what `kubectl top pod`
// shows), against the 128 MiB request `watch install` sets.
func measureWatchPods(ctx context.Context, out io.Writer, cl *bench.Cluster, tmp, kubeconfig, tenantFile string, sizes []int, parallel int, addNamespace func(string)) error {
	registry, err := os.ReadFile(filepath.Join(filepath.Dir(kubeconfig), "nodes", "registry"))
	if err != nil {
		return fmt.Errorf("no real nodes' registry beside the kubeconfig (start the cluster with ONTO_TESTCLUSTER_REAL_NODES=2): %w", err)
	}
	nodes, err := cl.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: testcluster.RealNodeLabel + "=real"})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("the cluster has no real node (label %s=real)", testcluster.RealNodeLabel)
	}
	bin, pushed, err := buildWatchImage(ctx, tmp, strings.TrimSpace(string(registry)))
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cl.Config)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nkubectl-onto watch as a pod on a real node, %s, against %s; image %s:%s pushed in %s; tenant platforms of %s\n",
		time.Now().Format(time.RFC3339), cl.Config.Host, buildinfo.DefaultImageRepository, watchPodVersion, secs(pushed), filepath.Base(tenantFile))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tenants\tinstall to Ready\tdrift repair\tworking set, median\tmax\tsamples\trequest\tlimit\t")
	for _, n := range sizes {
		// The row is printed before the fleet is deleted: deleting 100 tenants
		// through the watch takes minutes.
		report := func(r *watchPodRun) error {
			ws := slices.Sorted(slices.Values(r.workingSet))
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n, secs(r.ready), secs(r.repair),
				mib(ws[len(ws)/2]), mib(ws[len(ws)-1]), mibs(r.workingSet), r.request, r.limit)
			return tw.Flush()
		}
		if err := measureWatchPod(ctx, cl, dyn, bin, tmp, kubeconfig, tenantFile, n, parallel, addNamespace, report); err != nil {
			return fmt.Errorf("watch pod over %d tenants: %w", n, err)
		}
	}
	return nil
}

type watchPodRun struct {
	ready, repair  time.Duration
	workingSet     []int64
	request, limit string
}

// measureWatchPod installs n tenants, the watch over their namespaces on a real
// node, measures it and reports the figures; everything it made is deleted
// before it returns.
func measureWatchPod(ctx context.Context, cl *bench.Cluster, dyn dynamic.Interface, bin, tmp, kubeconfig, tenantFile string, n, parallel int, addNamespace func(string), report func(*watchPodRun) error) error {
	f, err := bench.WriteFleet(tenantFile, filepath.Join(tmp, fmt.Sprintf("watch-pod-%d", n)), bench.NamespaceName("watchpod"), n)
	if err != nil {
		return err
	}
	for _, ns := range f.Namespaces {
		addNamespace(ns)
	}
	watchNS := bench.NamespaceName("watchpod-op")
	addNamespace(watchNS)
	install := []string{"watch", "install", "-n", watchNS, "--namespaces", strings.Join(f.Namespaces, ","), "--replicas", "1"}
	// The tenants' OntoPlatforms go first, while the watch runs and their namespaces
	// (and its RoleBindings there) still exist: it holds their uninstall finalizer,
	// and a namespace deleted with its platform loses the watch's RoleBinding before
	// the platform, which then keeps the namespace Terminating. Then the namespaces,
	// the watch, and what watch install made outside its namespace.
	defer func() {
		ctx := context.WithoutCancel(ctx)
		logf("delete the %d tenants' platforms, then their namespaces", n)
		if err := deletePlatforms(ctx, dyn, f.Namespaces, 5*time.Minute); err != nil {
			logf("%v", err)
		}
		if err := cl.DeleteNamespaces(ctx, f.Namespaces, 10*time.Minute); err != nil {
			logf("%v", err)
		}
		if err := cl.DeleteNamespace(ctx, watchNS, 3*time.Minute); err != nil {
			logf("%v", err)
		}
		removeWatchInstall(ctx, bin, kubeconfig, install)
	}()
	logf("install %d tenants: kubectl-onto apply -f %s --parallel %d", n, f.Dir, parallel)
	if _, err := bench.RunPlugin(ctx, bin, kubeconfig, "apply", "-f", f.Dir, "--parallel", fmt.Sprint(parallel)); err != nil {
		return err
	}

	start := time.Now()
	logf("kubectl-onto %s --apply (%d namespaces)", strings.Join(install[:4], " "), n)
	if out, err := exec.CommandContext(ctx, bin, append(install, "--apply", "--kubeconfig", kubeconfig)...).CombinedOutput(); err != nil {
		return fmt.Errorf("watch install --apply: %w\n%s", err, out)
	}
	// On the real nodes, as a team with a node pool of its own places it.
	placement, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]string{testcluster.RealNodeLabel: "real"},
		"tolerations":  []corev1.Toleration{{Key: testcluster.RealNodeTaintKey, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
	}}}})
	if err != nil {
		return err
	}
	if _, err := cl.Kube.AppsV1().Deployments(watchNS).Patch(ctx, "kubectl-onto-watch", types.StrategicMergePatchType, placement, metav1.PatchOptions{}); err != nil {
		return err
	}
	pod, err := waitRealWatchPod(ctx, cl, watchNS)
	if err != nil {
		return err
	}
	r := &watchPodRun{ready: time.Since(start)}
	res := pod.Spec.Containers[0].Resources
	r.request, r.limit = res.Requests.Memory().String(), res.Limits.Memory().String()
	logf("watch pod %s Ready on %s after %s", pod.Name, pod.Spec.NodeName, secs(r.ready))

	// A drift repair: the watch is not only synced but acting.
	target := f.Namespaces[len(f.Namespaces)/2]
	if err := cl.Kube.AppsV1().Deployments(target).Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
		return err
	}
	start = time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cl.Kube.AppsV1().Deployments(target).Get(ctx, "gateway", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		return fmt.Errorf("the watch did not repair %s/gateway within 2 min: %w", target, err)
	}
	r.repair = time.Since(start)

	// The working set of each metrics-server scrape that follows (one per 15 s).
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Duration(watchPodSamples+2)*20*time.Second, true, func(ctx context.Context) (bool, error) {
		m, err := dyn.Resource(schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}).
			Namespace(watchNS).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ts, _, _ := unstructured.NestedString(m.Object, "timestamp")
		if ts == last {
			return false, nil
		}
		containers, _ := m.Object["containers"].([]any)
		for _, ct := range containers {
			usage, _ := ct.(map[string]any)["usage"].(map[string]any)
			if mem, ok := usage["memory"].(string); ok {
				q, err := resource.ParseQuantity(mem)
				if err != nil {
					return false, err
				}
				last = ts
				r.workingSet = append(r.workingSet, q.Value())
			}
		}
		return len(r.workingSet) >= watchPodSamples, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d working-set samples of pod %s/%s from metrics-server: %w", len(r.workingSet), watchPodSamples, watchNS, pod.Name, err)
	}
	return report(r)
}

// deletePlatforms deletes the OntoPlatforms of namespaces and waits until they are
// gone (their finalizers done).
func deletePlatforms(ctx context.Context, dyn dynamic.Interface, namespaces []string, timeout time.Duration) error {
	platforms := dyn.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms"))
	for _, ns := range namespaces {
		if err := platforms.Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the OntoPlatforms of %s: %w", ns, err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := platforms.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range list.Items {
			if slices.Contains(namespaces, p.GetNamespace()) {
				return false, nil
			}
		}
		return true, nil
	})
}

// buildWatchImage builds kubectl-onto for this machine at watchPodVersion and the
// watch's image from it (internal/image, as make image does), and pushes the image
// to registry as buildinfo's default repository, which the real nodes pull from
// it. It returns the binary and how long the push took.
func buildWatchImage(ctx context.Context, tmp, registry string) (string, time.Duration, error) {
	moduleDir, err := os.Getwd()
	if err != nil {
		return "", 0, err
	}
	logf("build kubectl-onto %s and its image", watchPodVersion)
	bins, err := image.Compile(ctx, image.CompileOptions{
		ModuleDir: moduleDir,
		OutDir:    filepath.Join(tmp, "watch-image"),
		LDFlags:   "-s -w -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.Version=" + watchPodVersion,
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
	})
	if err != nil {
		return "", 0, err
	}
	idx, err := image.Build(image.Options{Binaries: bins, Version: watchPodVersion, Created: time.Unix(0, 0)})
	if err != nil {
		return "", 0, err
	}
	// ghcr.io/<repo> is what the nodes ask for; the registry serves it as <repo>.
	repo := strings.TrimPrefix(buildinfo.DefaultImageRepository, "ghcr.io/")
	start := time.Now()
	if _, err := image.Push(ctx, registry+"/"+repo, watchPodVersion, idx); err != nil {
		return "", 0, err
	}
	return bins[0].Path, time.Since(start), nil
}

// waitRealWatchPod waits for a Ready pod of the watch on a real node.
func waitRealWatchPod(ctx context.Context, cl *bench.Cluster, ns string) (*corev1.Pod, error) {
	var found *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := cl.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if strings.HasPrefix(p.Spec.NodeName, "onto-real-") && p.DeletionTimestamp == nil && health.PodReady(p) {
				found = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no Ready watch pod on a real node in %s within 3 min: %w", ns, err)
	}
	return found, nil
}

// removeWatchInstall deletes what `watch install` (install, its flags) creates:
// the namespace goes with the namespaces the bench made, the cluster-scoped
// objects (ClusterRoles, bindings, admission policies) here.
func removeWatchInstall(ctx context.Context, bin, kubeconfig string, install []string) {
	out, err := exec.CommandContext(ctx, bin, append(install, "-o", "json", "--kubeconfig", kubeconfig)...).Output()
	if err != nil {
		logf("list what watch install made: %v", err)
		return
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(out); err != nil {
		logf("decode watch install -o json: %v", err)
		return
	}
	cl, err := bench.Connect(kubeconfig)
	if err != nil {
		logf("%v", err)
		return
	}
	clients, err := kube.New(cl.Config)
	if err != nil {
		logf("%v", err)
		return
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.GetNamespace() != "" || o.GetKind() == "Namespace" {
			continue
		}
		ri, err := clients.Resource(o)
		if err == nil {
			err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			logf("delete %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// mibs lists byte counts in MiB.
func mibs(bs []int64) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = fmt.Sprintf("%.1f", float64(b)/(1<<20))
	}
	return strings.Join(parts, " ")
}
