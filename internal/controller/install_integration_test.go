/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// installed is a watch installed by the library's --apply path, with a name of its
// own (its ClusterRoles are the test's alone), running in a fresh namespace.
type installed struct {
	c       *testcluster.Cluster
	clients *kube.Clients
	opts    controller.InstallOptions
	objs    []*unstructured.Unstructured
}

// installWatch applies the watch's objects as `watch install --apply` does, into a
// namespace that does not exist yet, watching watched; the cluster-scoped objects
// are deleted when the test ends.
func installWatch(t *testing.T, c *testcluster.Cluster, watched ...string) *installed {
	t.Helper()
	return installWatchWith(t, c, controller.InstallOptions{Namespaces: watched})
}

// installWatchWith is installWatch with opts (image, name and namespace filled in).
func installWatchWith(t *testing.T, c *testcluster.Cluster, opts controller.InstallOptions) *installed {
	t.Helper()
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	opts.Image, opts.Namespace, opts.Name = "registry.example/kubectl-onto:test", c.NewNamespaceName(t), testcluster.UniqueName(t, "w")
	objs, err := controller.InstallObjects(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, o := range objs {
			if o.GetNamespace() != "" || o.GetKind() == "Namespace" {
				continue // goes with its namespace
			}
			ri, err := clients.Resource(o)
			if err == nil {
				err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s: %v", kube.Ref(o), err)
			}
		}
	})
	if err := controller.ApplyInstall(t.Context(), clients, objs, false, nil); err != nil {
		t.Fatalf("apply the watch's objects: %v", err)
	}
	return &installed{c: c, clients: clients, opts: opts, objs: objs}
}

// TestInstallAppliesRestricted: --apply through the library creates the watch's
// namespace enforcing PodSecurity restricted, whose admission then admits the
// watch's pods; a second apply changes nothing. A server-side dry-run of the
// Deployment in another namespace enforcing (and warning about) restricted passes
// without a warning, while a pod without the security context is refused there, so
// the admission is on.
func TestInstallAppliesRestricted(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	in := installWatch(t, c)
	ctx, ns := t.Context(), in.opts.Namespace

	live, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("namespace %s labels %v: not enforcing restricted", ns, live.Labels)
	}
	dep, err := testcluster.WaitFor(ctx, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: in.opts.Name}}, 90*time.Second,
		func(d *appsv1.Deployment) (bool, error) { return d.Status.ReadyReplicas == 2, nil })
	if err != nil {
		events, _ := c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		var why []string
		for _, e := range events.Items {
			why = append(why, e.InvolvedObject.Kind+" "+e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
		}
		t.Fatalf("the watch's pods in its restricted namespace: %v\nevents:\n%s", err, strings.Join(why, "\n"))
	}

	if err := controller.ApplyInstall(ctx, in.clients, in.objs, false, nil); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	again, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, in.opts.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Generation != dep.Generation {
		t.Errorf("a second apply changed the Deployment: generation %d → %d", dep.Generation, again.Generation)
	}

	// A namespace of the user's, enforcing restricted and warning about it.
	restrictedNS := c.Namespace(t)
	labels := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted","pod-security.kubernetes.io/warn":"restricted"}}}`
	if _, err := c.Kube.CoreV1().Namespaces().Patch(ctx, restrictedNS, types.MergePatchType, []byte(labels), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = warnings
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want appsv1.Deployment
	for _, o := range in.objs {
		if o.GetKind() == "Deployment" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &want); err != nil {
				t.Fatal(err)
			}
		}
	}
	want.Namespace = restrictedNS
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if _, err := kc.AppsV1().Deployments(restrictedNS).Create(ctx, &want, dryRun); err != nil {
		t.Fatalf("server-side dry-run of the Deployment in a restricted namespace: %v", err)
	}
	if w := warnings.all(); len(w) > 0 {
		t.Fatalf("the dry-run of the Deployment warned: %v", w)
	}
	// Only pods are enforced: one of the template without its security contexts must be
	// refused, or the namespace's label proves nothing.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unrestricted", Namespace: restrictedNS}, Spec: *want.Spec.Template.Spec.DeepCopy()}
	pod.Spec.ServiceAccountName, pod.Spec.SecurityContext, pod.Spec.Containers[0].SecurityContext = "", nil, nil
	if _, err := kc.CoreV1().Pods(restrictedNS).Create(ctx, pod, dryRun); !apierrors.IsForbidden(err) {
		t.Fatalf("a pod without security contexts in namespace %s: %v, want Forbidden by PodSecurity", restrictedNS, err)
	}
}

type warningRecorder struct {
	mu   sync.Mutex
	list []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// asServiceAccount is a REST config that acts as the installed watch's ServiceAccount
// (impersonation by the admin identity), so every request below is authorized by the
// install's RBAC and nothing else.
func (in *installed) asServiceAccount() *rest.Config {
	cfg := rest.CopyConfig(in.c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + in.opts.Namespace + ":" + in.opts.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + in.opts.Namespace, "system:authenticated"},
	}
	return cfg
}

// TestInstallRBACIsEnough runs, as the installed watch's ServiceAccount, what the watch
// does: an upgrade with a migration Job (the path that plans the CRD and the
// OntoPlatform as the CLI does), then the watch itself with leader election: its
// finalizer, drift repair, Events, and the ordered uninstall when the platform is
// deleted. Then what it must not do is refused.
func TestInstallRBACIsEnough(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	admin, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", c.Namespace(t))
	p.Spec.Version = "1.5.0"
	ontotest.Small(&p.Spec)
	p.Spec.Remediation.Memory = v1alpha1.MemoryRemediationSpec{Enabled: true, Factor: "1.5"}
	ontotest.Install(t, admin, p)
	in := installWatch(t, c, p.Namespace)
	cfg := in.asServiceAccount()
	sa, err := kube.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ns := t.Context(), p.Namespace
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	// The upgrade as the reconciler runs it (shorter canary soak), with a migration.
	target := *ontotest.Release(t, "1.6.0")
	target.Components = maps.Clone(target.Components)
	img := target.Components["data-service"]
	img.Migration = &release.Migration{Args: []string{"migrate", "--to", "1.6.0"}, BackwardCompatible: true}
	target.Components["data-service"] = img
	opts := upgrade.DefaultOptions()
	opts.Apply.Holder, opts.Apply.PlaneTimeout = "watch-rbac-test", 90*time.Second
	opts.CanarySoak, opts.CanaryTimeout = 2*time.Second, 90*time.Second
	spec := *p.Spec.DeepCopy()
	spec.Version = "1.6.0"
	u := &upgrade.Upgrade{Clients: sa, Applier: &apply.Applier{Clients: sa, Now: time.Now, Log: log}, Namespace: ns, Name: p.Name,
		Catalog: ontotest.Catalog(t), Options: opts, Target: &upgrade.Target{Spec: spec, Release: target}}
	if _, err := u.Run(ctx); err != nil {
		t.Fatalf("upgrade as the watch's ServiceAccount: %v", err)
	}
	if job, err := c.Kube.BatchV1().Jobs(ns).Get(ctx, "data-service-migrate-1-6-0", metav1.GetOptions{}); err != nil || job.Status.Succeeded != 1 {
		t.Fatalf("migration Job run as the ServiceAccount: %v", err)
	}
	if st := ontotest.Live(t, admin, ns, p.Name).Status; st.Version != "1.6.0" || st.Upgrade != nil {
		t.Fatalf("status after the upgrade: version %s, upgrade %+v", st.Version, st.Upgrade)
	}

	// The watch, as the ServiceAccount, with leader election in its own namespace.
	audit := &syncBuffer{}
	mgr, err := controller.NewManager(cfg, sa, controller.Options{
		Namespaces: []string{ns}, Drift: controller.DriftRepair, Audit: controller.NewAuditLog(audit),
		LeaderElect: true, LeaderElectionNamespace: in.opts.Namespace,
		Holder: "watch-rbac-test", LockTTL: 15 * time.Second, Log: log, Catalog: ontotest.Catalog(t), MaxConcurrentReconciles: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	e := &watchEnv{t: t, c: c, clients: admin, p: p, audit: audit}

	e.eventually("leader election Lease", 60*time.Second, func() (bool, error) {
		_, err := c.Kube.CoordinationV1().Leases(in.opts.Namespace).Get(ctx, controller.LeaderElectionID, metav1.GetOptions{})
		return err == nil, err
	})
	e.eventually("leader election Event", 30*time.Second, func() (bool, error) {
		list, err := c.Kube.CoreV1().Events(in.opts.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=LeaderElection"})
		return err == nil && len(list.Items) > 0, err
	})
	e.eventually("finalizer added", 60*time.Second, func() (bool, error) {
		return contains(e.live().Finalizers, apply.Finalizer), nil
	})
	old, err := e.deployment("gateway")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kube.AppsV1().Deployments(ns).Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("gateway recreated", 60*time.Second, func() (bool, error) {
		d, err := e.deployment("gateway")
		return err == nil && d.UID != old.UID, err
	})
	e.eventually("an Event on the platform", 20*time.Second, func() (bool, error) {
		list, err := c.Kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + p.Name})
		if err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			if ev.Reason == "Reconciled" && strings.Contains(ev.Note, "gateway") {
				return true, nil
			}
		}
		return false, nil
	})

	// The memory remediation: an OOM-killed nessie gets a raised limit, recorded in
	// status.remediations, all written as the ServiceAccount.
	nessie, err := e.deployment(v1alpha1.ComponentNessie)
	if err != nil {
		t.Fatal(err)
	}
	limit := nessie.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
	if err := c.SetPodChaos(ctx, ns, e.runningPod(v1alpha1.ComponentNessie).Name, testcluster.ChaosOOMKilled); err != nil {
		t.Fatal(err)
	}
	e.eventually("nessie's memory limit raised by the watch as its ServiceAccount", 60*time.Second, func() (bool, error) {
		d, err := e.deployment(v1alpha1.ComponentNessie)
		if err != nil {
			return false, err
		}
		got := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		return got.Cmp(limit) > 0 && len(e.live().Status.Remediations) == 1, nil
	})
	if !strings.Contains(audit.String(), `"action":"raise-memory"`) {
		t.Errorf("no raise-memory audit line:\n%s", audit.String())
	}

	ri, err := admin.Resource(platformObject(p))
	if err != nil {
		t.Fatal(err)
	}
	if err := ri.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("platform uninstalled and gone", 120*time.Second, func() (bool, error) {
		_, err := ri.Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := e.deployment("gateway"); !apierrors.IsNotFound(err) {
		t.Fatalf("gateway Deployment after the platform's deletion: %v", err)
	}

	// Least privilege: outside its namespaces and rules, the ServiceAccount is refused.
	other := c.Namespace(t)
	refused := map[string]error{}
	_, refused["list Secrets in a namespace it does not watch"] = sa.Kube.CoreV1().Secrets(other).List(ctx, metav1.ListOptions{})
	_, refused["list Secrets of every namespace"] = sa.Kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	_, refused["patch a namespace it does not watch"] = sa.Kube.CoreV1().Namespaces().Patch(ctx, other, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	_, refused["create a pod"] = sa.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	refused["delete an OntoPlatform"] = sa.Dynamic.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms")).Namespace(ns).Delete(ctx, "x", metav1.DeleteOptions{})
	_, refused["read another CRD"] = sa.Dynamic.Resource(crdGVR()).Get(ctx, "stages.kwok.x-k8s.io", metav1.GetOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the watch's ServiceAccount: %v, want Forbidden", what, err)
		}
	}
}

func crdGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
}
