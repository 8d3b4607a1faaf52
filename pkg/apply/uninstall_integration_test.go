/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// uninstallFixture is a platform installed in a fresh namespace.
type uninstallFixture struct {
	cluster  *testcluster.Cluster
	clients  *kube.Clients
	platform *v1alpha1.OntoPlatform
	ns       string
	// onEvent, when set, sees each event of uninstall as it is emitted, before the
	// run goes on.
	onEvent func(apply.Event)
}

// uninstallComponents are the components of the minimal example the uninstall tests
// install: one or two in every plane, so the reverse order has each plane to order,
// and the generated Secrets (postgres, minio and its services' user), which uninstall keeps and
// --delete-data deletes.
var uninstallComponents = []string{v1alpha1.ComponentPostgres, v1alpha1.ComponentMinio,
	v1alpha1.ComponentOntologyService, v1alpha1.ComponentDataService,
	v1alpha1.ComponentAgentRuntime, v1alpha1.ComponentGateway}

// install applies examples/minimal.yaml with only the uninstallComponents, as the
// platform "onto-dev" of a fresh namespace, through the library path apply uses. The
// namespace exists beforehand, as one a user made, unless newNamespace: then apply
// creates it.
func install(t *testing.T, newNamespace bool) *uninstallFixture {
	t.Helper()
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	var ns string
	if newNamespace {
		ns = c.NewNamespaceName(t)
	} else {
		ns = c.Namespace(t)
	}
	p := ontotest.Example(t, "minimal.yaml", ns)
	keep(&p.Spec, uninstallComponents)
	ontotest.Install(t, clients, p)
	return &uninstallFixture{cluster: c, clients: clients, platform: p, ns: ns}
}

// uninstall runs Uninstall and records its events.
func (f *uninstallFixture) uninstall(t *testing.T, opts apply.UninstallOptions) (*apply.UninstallResult, []apply.Event, error) {
	t.Helper()
	var mu sync.Mutex
	var events []apply.Event
	a := &apply.Applier{Clients: f.clients, Now: time.Now, Observer: func(e apply.Event) {
		if f.onEvent != nil {
			f.onEvent(e)
		}
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}}
	if opts.PlaneTimeout == 0 {
		opts.PlaneTimeout = 90 * time.Second
	}
	opts.Holder = "test"
	res, err := a.Uninstall(t.Context(), f.ns, "", opts)
	return res, events, err
}

// uninstallOutcome is what an uninstall run by uninstallInBackground returned.
type uninstallOutcome struct {
	res    *apply.UninstallResult
	events []apply.Event
	err    error
}

// uninstallInBackground runs uninstall in a goroutine; its outcome comes on the
// channel when it ends.
func (f *uninstallFixture) uninstallInBackground(t *testing.T, opts apply.UninstallOptions) <-chan uninstallOutcome {
	done := make(chan uninstallOutcome, 1)
	go func() {
		res, events, err := f.uninstall(t, opts)
		done <- uninstallOutcome{res, events, err}
	}()
	return done
}

// members lists the live objects labelled as the platform's inventory members.
func (f *uninstallFixture) members(t *testing.T) []string {
	t.Helper()
	gks := []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Secret"}, {Kind: "Service"}, {Kind: "ServiceAccount"},
		{Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "StatefulSet"}, {Kind: "Namespace"},
		{Group: "policy", Kind: "PodDisruptionBudget"}, {Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}}
	l := &inventory.Lister{Dynamic: f.clients.Dynamic, Mapper: f.clients.Mapper}
	objs, err := l.List(t.Context(), f.ns, inventory.ID(f.ns, f.platform.Name), gks)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, kube.Ref(o))
	}
	slices.Sort(out)
	return out
}

func (f *uninstallFixture) pvcs(t *testing.T) []corev1.PersistentVolumeClaim {
	t.Helper()
	list, err := f.cluster.Kube.CoreV1().PersistentVolumeClaims(f.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + f.platform.Name})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// foreignConfigMap creates a ConfigMap without the platform's labels.
func (f *uninstallFixture) foreignConfigMap(t *testing.T) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-the-platforms", Namespace: f.ns}, Data: map[string]string{"k": "v"}}
	if _, err := f.cluster.Kube.CoreV1().ConfigMaps(f.ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f *uninstallFixture) foreignSurvives(t *testing.T) {
	t.Helper()
	if _, err := f.cluster.Kube.CoreV1().ConfigMaps(f.ns).Get(t.Context(), "not-the-platforms", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap without the part-of label did not survive uninstall: %v", err)
	}
}

// lookalikePod creates a pod of no workload of the platform that carries the labels
// the ontology-service Deployment selects, as a migration Job's pod does, and returns
// its name.
func (f *uninstallFixture) lookalikePod(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	d, err := f.cluster.Kube.AppsV1().Deployments(f.ns).Get(ctx, "ontology-service", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	no, yes := false, true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lookalike", Namespace: f.ns, Labels: d.Spec.Selector.MatchLabels},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: new(int64(1000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources:       corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}, Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		},
	}
	if _, err := f.cluster.Kube.CoreV1().Pods(f.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod.Name
}

func (f *uninstallFixture) platformGone(t *testing.T) {
	t.Helper()
	ri, err := inventory.PlatformResource(f.clients.Mapper, f.clients.Dynamic, f.ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Get(t.Context(), f.platform.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("OntoPlatform still there after uninstall (err %v)", err)
	}
}

// checkStages checks that the plan deletes in the stages want (planes of one stage
// together) and that the events keep to them: no object of a stage is deleted before
// every plane of the stage before it is gone, and every plane is deleted.
func checkStages(t *testing.T, p *apply.UninstallPlan, events []apply.Event, want [][]string) {
	t.Helper()
	if got := p.StagePlanes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("plan stages %v, want %v", got, want)
	}
	stageOf := map[string]int{}
	for i, planes := range want {
		for _, plane := range planes {
			stageOf[plane] = i
		}
	}
	gone, deleted := map[string]bool{}, map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case apply.EventObjectDeleted:
			deleted[e.Plane] = true
			if k := stageOf[e.Plane]; k > 0 {
				for _, before := range want[k-1] {
					if !gone[before] {
						t.Errorf("%s of plane %s deleted before plane %s was gone", e.Object, e.Plane, before)
					}
				}
			}
		case apply.EventPlaneDeleted:
			gone[e.Plane] = true
		}
	}
	for plane := range stageOf {
		if !deleted[plane] || !gone[plane] {
			t.Errorf("plane %s: deleted %v, gone %v; want both", plane, deleted[plane], gone[plane])
		}
	}
}

func TestUninstallReverseOrderKeepsData(t *testing.T) {
	t.Parallel()
	f := install(t, false)
	f.foreignConfigMap(t)
	pvcsBefore := f.pvcs(t)
	if len(pvcsBefore) == 0 {
		t.Fatal("the installed platform has no PersistentVolumeClaims to keep")
	}
	before := f.members(t)

	// A dry run deletes nothing.
	res, _, err := f.uninstall(t, apply.UninstallOptions{DryRun: apply.DryRunServer})
	if err != nil {
		t.Fatalf("uninstall --dry-run=server: %v", err)
	}
	if got := f.members(t); !slices.Equal(got, before) {
		t.Fatalf("dry run changed the members:\nbefore %v\nafter  %v", before, got)
	}
	if res.Deleted == 0 || res.Deleted != res.Plan.Count() {
		t.Errorf("dry run counts %d deletes, plan %d", res.Deleted, res.Plan.Count())
	}

	// A pod with a workload's labels but none of its owners is not waited for: with a
	// wait by labels, the uninstall would fail after the plane timeout.
	lookalike := f.lookalikePod(t)
	// The kept namespace leaves the inventory before the OntoPlatform goes: a run
	// killed after the OntoPlatform's delete must not leave the namespace labelled
	// for a parent no re-run finds.
	labelledAtPlatformDelete := "no OntoPlatform delete seen"
	f.onEvent = func(e apply.Event) {
		if e.Type != apply.EventObjectDeleted || e.Plane != plan.PlatformPlane {
			return
		}
		ns, err := f.cluster.Kube.CoreV1().Namespaces().Get(t.Context(), f.ns, metav1.GetOptions{})
		if err != nil {
			labelledAtPlatformDelete = err.Error()
			return
		}
		labelledAtPlatformDelete = ns.Labels[inventory.PartOfLabel]
	}
	res, events, err := f.uninstall(t, apply.UninstallOptions{PlaneTimeout: 30 * time.Second})
	f.onEvent = nil
	if err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if labelledAtPlatformDelete != "" {
		t.Errorf("as the OntoPlatform was deleted, the kept namespace still carried %s=%q", inventory.PartOfLabel, labelledAtPlatformDelete)
	}
	checkStages(t, res.Plan, events, [][]string{{"gateway", "intelligence", "data", "control"}, {"infrastructure"}, {"tenancy"}, {plan.PlatformPlane}})

	// Only the generated Secrets stay of the inventory; the kept namespace leaves it, so
	// a later platform there is no conflict with a parent that is gone.
	var wantLeft []string
	for _, m := range before {
		if m == "Secret "+f.ns+"/postgres" || m == "Secret "+f.ns+"/minio" || m == "Secret "+f.ns+"/minio-service-credentials" {
			wantLeft = append(wantLeft, m)
		}
	}
	if got := f.members(t); !slices.Equal(got, wantLeft) {
		t.Errorf("members left after uninstall:\n got %v\nwant %v", got, wantLeft)
	}
	if len(wantLeft) != 3 || !slices.ContainsFunc(before, func(m string) bool { return strings.HasPrefix(m, "Namespace ") }) {
		t.Errorf("expected the namespace among the members before and three generated Secrets after, found %v / %v", before, wantLeft)
	}
	if got := len(f.pvcs(t)); got != len(pvcsBefore) {
		t.Errorf("%d PersistentVolumeClaims left, want all %d kept", got, len(pvcsBefore))
	}
	pods, err := f.cluster.Kube.CoreV1().Pods(f.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != lookalike {
		var names []string
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		t.Errorf("pods left after uninstall %v, want only %s (of no platform workload)", names, lookalike)
	}
	if len(res.Plan.Kept) != len(pvcsBefore)+4 {
		t.Errorf("plan keeps %d objects, want %d PVCs, 3 Secrets and the namespace: %+v", len(res.Plan.Kept), len(pvcsBefore), res.Plan.Kept)
	}
	f.foreignSurvives(t)
	f.platformGone(t)
	if _, err := inventory.PlatformResource(f.clients.Mapper, f.clients.Dynamic, f.ns); err != nil {
		t.Errorf("the OntoPlatform CRD went with the platform: %v", err)
	}
	if _, err := f.cluster.Kube.CoordinationV1().Leases(f.ns).Get(t.Context(), apply.LockName(f.platform.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("lock lease left behind (err %v)", err)
	}
}

func TestUninstallDeleteData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// foreign adds an object the platform does not own, which must keep the
		// namespace.
		foreign bool
		// existing: the namespace was made before the install, not by apply.
		existing      bool
		namespaceGone bool
	}{
		{name: "namespace holds only the platform", namespaceGone: true},
		{name: "namespace holds a foreign object", foreign: true},
		{name: "namespace made beforehand", existing: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := install(t, !tc.existing)
			if tc.foreign {
				f.foreignConfigMap(t)
			}
			if len(f.pvcs(t)) == 0 {
				t.Fatal("the installed platform has no PersistentVolumeClaims")
			}
			res, events, err := f.uninstall(t, apply.UninstallOptions{DeleteData: true})
			if err != nil {
				t.Fatalf("uninstall --delete-data: %v", err)
			}
			want := [][]string{{"gateway", "intelligence", "data", "control"}, {"infrastructure"}, {"tenancy"}, {apply.DataStep}, {plan.PlatformPlane}}
			if tc.namespaceGone {
				want = append(want, []string{"namespace"})
			}
			checkStages(t, res.Plan, events, want)
			if got := f.pvcs(t); len(got) != 0 {
				t.Errorf("%d PersistentVolumeClaims left after --delete-data", len(got))
			}
			for _, s := range []string{"postgres", "minio", "minio-service-credentials"} {
				_, err := f.cluster.Kube.CoreV1().Secrets(f.ns).Get(t.Context(), s, metav1.GetOptions{})
				if !apierrors.IsNotFound(err) {
					t.Errorf("generated Secret %s left after --delete-data (err %v)", s, err)
				}
			}
			ns, err := f.cluster.Kube.CoreV1().Namespaces().Get(t.Context(), f.ns, metav1.GetOptions{})
			gone := apierrors.IsNotFound(err) || (err == nil && ns.DeletionTimestamp != nil)
			if gone != tc.namespaceGone {
				t.Errorf("namespace gone = %v, want %v (err %v)", gone, tc.namespaceGone, err)
			}
			if tc.foreign {
				f.foreignSurvives(t)
				f.platformGone(t)
			}
		})
	}
}

func TestUninstallMissingPlatform(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	a := &apply.Applier{Clients: clients, Now: time.Now}
	for _, name := range []string{"", "nope"} {
		_, err := a.Uninstall(t.Context(), ns, name, apply.UninstallOptions{})
		var nf *inventory.NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("uninstall %q: got %v, want a NotFoundError", name, err)
		}
		// On a fresh cluster this test may run before any other installed the CRD: the
		// message then says that instead of how to list platforms.
		if !strings.Contains(err.Error(), ns) || !(strings.Contains(err.Error(), "kubectl get ontoplatforms") || strings.Contains(err.Error(), "no OntoPlatform CRD")) {
			t.Errorf("uninstall %q: message %q should name the namespace and how to find platforms", name, err)
		}
	}
}

// TestUninstallRerunAfterThePlatformWent: an uninstall killed after it deleted the
// OntoPlatform, before it released its lock, left the lock's Lease. Its re-run (here
// without a name: the Lease names the platform) takes the dead holder's Lease over and
// removes it; a run that finds nothing left still fails as not found, and a Lease whose
// holder still runs is not taken.
func TestUninstallRerunAfterThePlatformWent(t *testing.T) {
	t.Parallel()
	f := install(t, false)
	if _, _, err := f.uninstall(t, apply.UninstallOptions{}); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	leases := f.cluster.Kube.CoordinationV1().Leases(f.ns)
	// leaveLock takes the platform's lock as process holder and stops renewing it
	// without releasing it, as a killed run leaves it.
	leaveLock := func(holder apply.Process) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		a := &apply.Applier{Clients: f.clients, Now: time.Now, Process: holder}
		if _, _, err := a.Lock(ctx, f.ns, f.platform.Name, apply.Options{Holder: "killed-uninstall"}); err != nil {
			t.Fatalf("take the lock: %v", err)
		}
		cancel()
	}
	rerun := func() ([]apply.Event, *apply.UninstallResult, error) {
		var events []apply.Event
		a := &apply.Applier{Clients: f.clients, Now: time.Now, Process: apply.CurrentProcess(), Observer: func(e apply.Event) { events = append(events, e) }}
		res, err := a.Uninstall(t.Context(), f.ns, "", apply.UninstallOptions{Holder: "rerun"})
		return events, res, err
	}

	// A holder that still runs (this process) keeps its Lease.
	leaveLock(apply.CurrentProcess())
	var locked *apply.LockedError
	if _, _, err := rerun(); !errors.As(err, &locked) {
		t.Fatalf("re-run beside a live holder: got %v, want a LockedError", err)
	}
	if err := leases.Delete(t.Context(), apply.LockName(f.platform.Name), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A killed holder: same host, PID and namespaces, another start time.
	dead := apply.CurrentProcess()
	dead.Start = "1"
	leaveLock(dead)
	events, res, err := rerun()
	if err != nil {
		t.Fatalf("re-run after the kill: %v", err)
	}
	if res.Plan.Platform.Name != f.platform.Name || res.Deleted != 0 {
		t.Errorf("re-run result: platform %s, %d deleted; want %s, 0", res.Plan.Platform.Name, res.Deleted, f.platform.Name)
	}
	if !slices.ContainsFunc(events, func(e apply.Event) bool { return e.Type == apply.EventLockTakenOver }) ||
		!slices.ContainsFunc(events, func(e apply.Event) bool { return e.Type == apply.EventDone }) {
		t.Errorf("re-run events %+v: want the lock taken over and done", events)
	}
	if _, err := leases.Get(t.Context(), apply.LockName(f.platform.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("lock lease left after the re-run (err %v)", err)
	}

	// Nothing is left now: another run fails as not found.
	var nf *inventory.NotFoundError
	if _, _, err := rerun(); !errors.As(err, &nf) {
		t.Errorf("run with nothing left: got %v, want a NotFoundError", err)
	}
}

// TestUninstallDeleteDataRerunWaitsForTheNamespace: an uninstall --delete-data that
// stopped while the namespace it deleted was going (here: its wait timed out; a kill
// leaves the same) finds no OntoPlatform on its re-run, only that namespace,
// Terminating. The re-run (without a name) waits for it, as the stopped run did, and
// ends when it is gone; without --delete-data a re-run does not touch it.
func TestUninstallDeleteDataRerunWaitsForTheNamespace(t *testing.T) {
	t.Parallel()
	f := install(t, true)
	namespaces := f.cluster.Kube.CoreV1().Namespaces()
	release := holdObject(t, f.cluster.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")), f.ns)
	_, _, err := f.uninstall(t, apply.UninstallOptions{DeleteData: true, PlaneTimeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "not gone after 3s") {
		t.Fatalf("uninstall --delete-data with the namespace held: got %v, want the namespace's wait to time out", err)
	}
	f.platformGone(t)

	var nf *inventory.NotFoundError
	if _, _, err := f.uninstall(t, apply.UninstallOptions{}); !errors.As(err, &nf) {
		t.Fatalf("re-run without --delete-data: got %v, want a NotFoundError", err)
	}
	done := f.uninstallInBackground(t, apply.UninstallOptions{DeleteData: true})
	select {
	case o := <-done:
		t.Fatalf("the re-run ended while the namespace was held: %v", o.err)
	case <-time.After(2 * time.Second):
	}
	release()
	o := <-done
	if o.err != nil {
		t.Fatalf("re-run: %v", o.err)
	}
	if _, err := namespaces.Get(t.Context(), f.ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s still there after the re-run (err %v)", f.ns, err)
	}
	if o.res.Plan.Platform.Name != f.platform.Name || o.res.Deleted != 1 {
		t.Errorf("re-run result: platform %q, %d deleted; want %q and the namespace", o.res.Plan.Platform.Name, o.res.Deleted, f.platform.Name)
	}
	if !slices.ContainsFunc(o.events, func(e apply.Event) bool { return e.Type == apply.EventDone }) {
		t.Errorf("re-run events %+v: want done", o.events)
	}
}

// TestUninstallRemovesWatchFinalizer: a platform the watch finalized once, with no
// watch running now, is uninstalled to the end: the CLI takes the finalizer off rather
// than waiting for ever on an OntoPlatform stuck Terminating.
func TestUninstallRemovesWatchFinalizer(t *testing.T) {
	t.Parallel()
	f := install(t, false)
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	obj.SetNamespace(f.ns)
	ri, err := f.clients.Resource(obj)
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, apply.Finalizer)
	if _, err := ri.Patch(t.Context(), f.platform.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	a := &apply.Applier{Clients: f.clients, Now: time.Now}
	if _, err := a.Uninstall(ctx, f.ns, f.platform.Name, apply.UninstallOptions{PlaneTimeout: time.Minute}); err != nil {
		t.Fatalf("uninstall of a platform with the watch's finalizer: %v", err)
	}
	if _, err := ri.Get(t.Context(), f.platform.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the OntoPlatform after uninstall: %v, want it gone", err)
	}
}

// holdPod puts a finalizer on a pod of component, so that a delete leaves it
// Terminating until release (also run at the test's end) takes it off. It returns the
// pod's name.
func (f *uninstallFixture) holdPod(t *testing.T, component string) (string, func()) {
	t.Helper()
	pods, err := f.cluster.Kube.CoreV1().Pods(f.ns).List(t.Context(), metav1.ListOptions{LabelSelector: v1alpha1.LabelName + "=" + component})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("%s pods: %v, %d", component, err, len(pods.Items))
	}
	held := pods.Items[0].Name
	return held, f.hold(t, corev1.SchemeGroupVersion.WithResource("pods"), held)
}

// hold puts a finalizer on the object name of resource in the fixture's namespace, so
// that a delete leaves it Terminating until release (also run at the test's end)
// takes it off.
func (f *uninstallFixture) hold(t *testing.T, resource schema.GroupVersionResource, name string) (release func()) {
	t.Helper()
	return holdObject(t, f.cluster.Dynamic.Resource(resource).Namespace(f.ns), name)
}

// holdObject puts a finalizer on the object name of ri (namespaced or not), as hold
// does.
func holdObject(t *testing.T, ri dynamic.ResourceInterface, name string) (release func()) {
	t.Helper()
	setFinalizers := func(finalizers string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"finalizers":%s}}`, finalizers)
		if _, err := ri.Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	setFinalizers(`["onto.dev/test-hold"]`)
	release = func() { setFinalizers("null") }
	t.Cleanup(release)
	return release
}

// TestUninstallTimeoutNamesWhatIsLeft: a pod and a Service that do not go fail their
// plane after --plane-timeout, naming the plane and what is left; nothing of a later
// stage is deleted; once they can go, a re-run finishes. The Service's delete is
// answered with the object, marked for deletion, where other deletes answer that the
// object is gone: the wait must watch it (kube.Clients.Delete).
func TestUninstallTimeoutNamesWhatIsLeft(t *testing.T) {
	t.Parallel()
	f := install(t, false)
	held, releasePod := f.holdPod(t, v1alpha1.ComponentOntologyService)
	releaseService := f.hold(t, corev1.SchemeGroupVersion.WithResource("services"), v1alpha1.ComponentOntologyService)
	_, events, err := f.uninstall(t, apply.UninstallOptions{PlaneTimeout: 3 * time.Second})
	var applyErr *apply.ApplyError
	if !errors.As(err, &applyErr) || applyErr.Plane != string(v1alpha1.PlaneControl) ||
		!strings.Contains(err.Error(), "not gone after 3s: pods ["+held+"] of the deleted workloads still present in "+f.ns+"; services ["+v1alpha1.ComponentOntologyService+"] still present: ") {
		t.Fatalf("uninstall with pod %s and Service %s held: %v, want plane control failing on both, named", held, v1alpha1.ComponentOntologyService, err)
	}
	for _, e := range events {
		if e.Plane == string(v1alpha1.PlaneInfrastructure) {
			t.Fatalf("an infrastructure event after the control plane failed: %+v", e)
		}
	}
	if _, err := f.cluster.Kube.AppsV1().StatefulSets(f.ns).Get(t.Context(), "postgres", metav1.GetOptions{}); err != nil {
		t.Fatalf("postgres after the failed uninstall: %v, want it kept", err)
	}
	// A retried failure still fails while the pod is held.
	if _, _, err := f.uninstall(t, apply.UninstallOptions{PlaneTimeout: 2 * time.Second}); err == nil {
		t.Fatal("the re-run with the pod still held succeeded")
	}
	// With the pod released, the Service alone still fails the plane.
	releasePod()
	if _, _, err := f.uninstall(t, apply.UninstallOptions{PlaneTimeout: 2 * time.Second}); err == nil || !strings.Contains(err.Error(), "not gone after 2s: services ["+v1alpha1.ComponentOntologyService+"] still present: ") {
		t.Fatalf("the re-run with the Service still held: %v, want it failing on the Service", err)
	}
	releaseService()
	if _, _, err := f.uninstall(t, apply.UninstallOptions{}); err != nil {
		t.Fatalf("the re-run once the pod and Service can go: %v", err)
	}
	f.platformGone(t)
}

// TestUninstallRerunWaitsForPodsOfDeletedWorkloads: an uninstall interrupted once it
// deleted a service plane's Deployment leaves that Deployment's pods to the garbage
// collector; the re-run no longer sees the Deployment, yet must not delete
// infrastructure before those pods are gone. One pod is held by a finalizer: until
// it is released, the re-run waits and postgres stays. Two interruptions: inside the
// service stage (the re-run still has service objects to delete, or not: either of
// the waits below may hold it), and once every object of the service stage is
// deleted (the re-run has no service stage, so only the infrastructure stage's wait
// for the pods of the planes deleted before it holds it).
func TestUninstallRerunWaitsForPodsOfDeletedWorkloads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// allServiceDeletes stops the first run at its last service-stage delete
		// instead of at ontology-service's.
		allServiceDeletes bool
	}{
		{name: "stopped inside the service stage"},
		{name: "stopped after the service stage's deletes", allServiceDeletes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			uninstallRerunWaitsForOrphanedPod(t, tc.allServiceDeletes)
		})
	}
}

func uninstallRerunWaitsForOrphanedPod(t *testing.T, allServiceDeletes bool) {
	f := install(t, false)
	ctx := t.Context()
	held, release := f.holdPod(t, v1alpha1.ComponentOntologyService)

	// The first run stops (as on Ctrl-C) once ontology-service is deleted, or once
	// every object of the first stage (the service planes) is.
	a := &apply.Applier{Clients: f.clients, Now: time.Now}
	servicePlanes, serviceObjects := map[string]bool{}, 0
	if allServiceDeletes {
		p, err := a.PlanUninstall(ctx, f.ns, "", apply.UninstallOptions{DryRun: apply.DryRunClient})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range p.Stages()[0] {
			servicePlanes[step.Plane] = true
			serviceObjects += len(step.Objects)
		}
		if !servicePlanes[string(v1alpha1.PlaneControl)] {
			t.Fatalf("first stage %v, want the service planes", p.StagePlanes()[0])
		}
	}
	stopCtx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	serviceDeleted := 0
	a.Observer = func(e apply.Event) {
		if e.Type != apply.EventObjectDeleted {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if servicePlanes[e.Plane] {
			serviceDeleted++
		}
		if (!allServiceDeletes && e.Object == "Deployment "+f.ns+"/ontology-service") || (allServiceDeletes && serviceDeleted == serviceObjects) {
			stop()
		}
	}
	if _, err := a.Uninstall(stopCtx, f.ns, "", apply.UninstallOptions{Holder: "test", PlaneTimeout: 90 * time.Second}); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted uninstall: %v, want context.Canceled", err)
	}
	if _, err := f.cluster.Kube.AppsV1().Deployments(f.ns).Get(ctx, "ontology-service", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ontology-service after the interrupted run: %v, want it deleted", err)
	}

	done := f.uninstallInBackground(t, apply.UninstallOptions{PlaneTimeout: 90 * time.Second})
	select {
	case r := <-done:
		t.Fatalf("the re-run finished (err %v) while pod %s of the deleted ontology-service was still there; events %+v", r.err, held, r.events)
	case <-time.After(5 * time.Second):
	}
	if _, err := f.cluster.Kube.AppsV1().StatefulSets(f.ns).Get(ctx, "postgres", metav1.GetOptions{}); err != nil {
		t.Fatalf("postgres while a service pod is still there: %v, want it kept until that pod is gone", err)
	}
	released := time.Now()
	release()
	r := <-done
	if r.err != nil {
		t.Fatalf("the re-run: %v", r.err)
	}
	t.Logf("the re-run finished %s after the held pod was released", time.Since(released).Round(10*time.Millisecond))
	if allServiceDeletes {
		// The path this case pins: no service stage was left to wait for the pod.
		if first := r.res.Plan.StagePlanes()[0]; first[0] != string(v1alpha1.PlaneInfrastructure) {
			t.Errorf("the re-run's first stage %v, want infrastructure (every service object was deleted before)", first)
		}
	}
	if _, err := f.cluster.Kube.AppsV1().StatefulSets(f.ns).Get(ctx, "postgres", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("postgres after the re-run: %v, want it deleted", err)
	}
	f.platformGone(t)
}
