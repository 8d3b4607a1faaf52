/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// env is one test's connection to the cluster and its platform.
type env struct {
	t        *testing.T
	cluster  *testcluster.Cluster
	clients  *kube.Clients
	writes   *atomic.Int64 // requests that change the platform: not GET/LIST/WATCH, dry-run or the lock lease
	dryRuns  *atomic.Int64 // server-side dry-runs
	platform *v1alpha1.OntoPlatform
	// patches are user kustomize patches rendered with the platform.
	patches []render.Patch
}

// newEnv connects, counting write requests, and loads example (a file of examples/)
// into a fresh namespace.
func newEnv(t *testing.T, example string) *env {
	t.Helper()
	c := testcluster.New(t)
	ensureServiceMonitorCRD(t, c)
	ns := c.Namespace(t)
	e := &env{t: t, cluster: c, writes: &atomic.Int64{}, dryRuns: &atomic.Int64{}}
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			// The lock lease is the run's own bookkeeping, not a write to the platform.
			if r.Method != http.MethodGet && !strings.Contains(r.URL.RawQuery, "dryRun=") && !strings.HasPrefix(r.URL.Path, "/apis/coordination.k8s.io/") {
				e.writes.Add(1)
			}
			if strings.Contains(r.URL.RawQuery, "dryRun=") {
				e.dryRuns.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	var err error
	if e.clients, err = kube.New(cfg); err != nil {
		t.Fatal(err)
	}
	e.platform = ontotest.Example(t, example, ns)
	return e
}

// small is the platform most tests install: five of the minimal example's twelve
// components, in four planes (infrastructure, control, data, gateway), with a
// StatefulSet and its generated Secret (postgres), two Deployments sharing a plane
// (data) and the gateway last. A test adds the components its path needs
// (newSmallEnv(t, more...)); the whole minimal example takes several times as long on
// the CI's two cores, where the control plane is what is busy.
var small = []string{v1alpha1.ComponentPostgres, v1alpha1.ComponentOntologyService,
	v1alpha1.ComponentDataService, v1alpha1.ComponentNessie, v1alpha1.ComponentGateway}

// keep turns off every component of s but those named in the lists.
func keep(s *v1alpha1.OntoPlatformSpec, names []string, more ...string) {
	for _, c := range s.Components() {
		if slices.Contains(names, c.Name) || slices.Contains(more, c.Name) {
			continue
		}
		if c.Service != nil {
			c.Service.Enabled = ptr.To(false)
		} else {
			c.Stateful.Enabled = ptr.To(false)
		}
	}
}

// newSmallEnv is newEnv of the minimal example with only the small components, and
// those of more.
func newSmallEnv(t *testing.T, more ...string) *env {
	t.Helper()
	e := newEnv(t, "minimal.yaml")
	keep(&e.platform.Spec, small, more...)
	return e
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// crdOnce applies the ServiceMonitor stand-in CRD once per test binary: the production
// example renders a ServiceMonitor.
var crdOnce sync.Once

func ensureServiceMonitorCRD(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	crdOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join("..", "..", "hack", "testcluster", "manifests", "servicemonitor-crd.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
		cl, err := kube.New(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		ri, err := cl.Resource(obj)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := obj.MarshalJSON()
		if _, err := ri.Patch(t.Context(), obj.GetName(), types.ApplyPatchType, js, metav1.PatchOptions{FieldManager: "test", Force: ptr.To(true)}); err != nil {
			t.Fatal(err)
		}
		// Wait until discovery serves the CRD's kind (obj is the CRD: its own kind is
		// CustomResourceDefinition, always served).
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
		gk := schema.GroupKind{Group: group, Kind: kind}
		if err := testcluster.Eventually(t.Context(), 30*time.Second, func(context.Context) (bool, error) {
			cl.Mapper.Reset()
			_, err := cl.Mapper.RESTMapping(gk)
			return err == nil, err
		}); err != nil {
			t.Fatalf("%s not served after its CRD was applied: %v", gk, err)
		}
	})
}

// desired renders the env's platform as it stands.
func (e *env) desired() *plan.Desired {
	e.t.Helper()
	return ontotest.Desired(e.t, e.platform, e.patches...)
}

func (e *env) plan(d *plan.Desired) *plan.Plan {
	e.t.Helper()
	p, err := (&plan.Planner{Clients: e.clients}).Plan(e.t.Context(), d)
	if err != nil {
		e.t.Fatalf("plan: %v", err)
	}
	return p
}

// apply plans and applies, recording events; it returns the events and the error.
func (e *env) apply(opts apply.Options) ([]apply.Event, error) {
	e.t.Helper()
	d := e.desired()
	var mu sync.Mutex
	var events []apply.Event
	a := &apply.Applier{Clients: e.clients, Now: time.Now, Observer: func(ev apply.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}}
	if opts.Release == nil {
		opts.Release = ontotest.Release(e.t, e.platform.Spec.Version)
	}
	_, err := a.Apply(e.t.Context(), d, opts)
	return events, err
}

func (e *env) mustApply() []apply.Event {
	e.t.Helper()
	ev, err := e.apply(testOptions())
	if err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	return ev
}

func testOptions() apply.Options { return ontotest.ApplyOptions() }

// changesOf lists the plan's changes of one action in the platform's planes, leaving
// out the OntoPlatform object itself (whose spec changes with every edit).
func changesOf(p *plan.Plan, action plan.Action) []plan.Change {
	var out []plan.Change
	for _, pl := range p.Planes {
		if pl.Name == plan.PlatformPlane {
			continue
		}
		for _, c := range pl.Changes {
			if c.Action == action {
				out = append(out, c)
			}
		}
	}
	return out
}

func (e *env) getPlatform() *v1alpha1.OntoPlatform {
	e.t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	obj.SetNamespace(e.platform.Namespace)
	ri, err := e.clients.Resource(obj)
	if err != nil {
		e.t.Fatal(err)
	}
	live, err := ri.Get(e.t.Context(), e.platform.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var p v1alpha1.OntoPlatform
	if err := runtimeFromUnstructured(live, &p); err != nil {
		e.t.Fatal(err)
	}
	return &p
}

// TestApplyProductionExample installs the article's production example from nothing,
// then checks the lifecycle promises around it: plane order, status, a plan of zero
// changes, a second apply without a single write, and an HPA's replicas left alone.
func TestApplyProductionExample(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "platform.yaml")
	events := e.mustApply()

	var order []string
	for _, ev := range events {
		if ev.Type == apply.EventPlaneStarted {
			order = append(order, ev.Plane)
		}
	}
	var want []string
	for _, p := range v1alpha1.Planes() {
		want = append(want, string(p))
	}
	if !slices.Equal(order, want) {
		t.Fatalf("planes applied in order %v, want %v", order, want)
	}
	// Every plane was healthy before the next one started.
	lastReady := map[string]int{}
	for i, ev := range events {
		if ev.Type == apply.EventPlaneReady {
			lastReady[ev.Plane] = i
		}
	}
	for i := 1; i < len(order); i++ {
		startNext := slices.IndexFunc(events, func(ev apply.Event) bool { return ev.Type == apply.EventPlaneStarted && ev.Plane == order[i] })
		if r, ok := lastReady[order[i-1]]; !ok || r > startNext {
			t.Fatalf("plane %s started before plane %s was healthy", order[i], order[i-1])
		}
	}

	st := e.getPlatform().Status
	// 13 components and Kafka's dedicated controllers (kafka.replicas 3).
	if st.Phase != v1alpha1.PhaseRunning || st.Version != "1.5.0" || st.ReadyComponents != "14/14" {
		t.Fatalf("status = phase %s version %s ready %s, want Running 1.5.0 14/14", st.Phase, st.Version, st.ReadyComponents)
	}
	for _, c := range st.Components {
		if !c.Ready || c.ReadyReplicas != c.DesiredReplicas || c.Version != "1.5.0" {
			t.Errorf("component %s: ready=%v %d/%d version %s", c.Name, c.Ready, c.ReadyReplicas, c.DesiredReplicas, c.Version)
		}
	}
	if len(st.History) != 1 || st.History[0].Result != v1alpha1.RevisionSucceeded {
		t.Fatalf("history = %+v, want one succeeded revision", st.History)
	}
	// The revision keeps what it was rendered from, in its snapshot.
	snap, err := (&apply.Applier{Clients: e.clients}).LoadRevision(t.Context(), e.platform.Namespace, e.platform.Name, 1)
	if err != nil || st.History[0].Snapshot != apply.RevisionSecretName(e.platform.Name, 1) || snap.Release.Version != "1.5.0" {
		t.Fatalf("snapshot of revision 1 (%q): %+v, %v", st.History[0].Snapshot, snap, err)
	}

	e.dryRuns.Store(0)
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after apply has changes: %+v", p.Summary)
	}
	if n := e.dryRuns.Load(); n != 0 {
		t.Errorf("the plan of the unchanged platform sent %d dry-runs, want 0: each object is proven unchanged from its managed fields", n)
	}
	e.checkProofAgreesWithServer()

	e.writes.Store(0)
	e.mustApply()
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a second apply of the same file sent %d write requests, want 0", n)
	}

	// Scale an autoscaled Deployment as its HPA would: the plan must not fight it.
	scale := []byte(`{"spec":{"replicas":5}}`)
	if _, err := e.cluster.Kube.AppsV1().Deployments(e.platform.Namespace).Patch(t.Context(), "data-service", types.MergePatchType, scale, metav1.PatchOptions{FieldManager: "horizontal-pod-autoscaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after an HPA-style scale has changes: %+v %+v", p.Summary, changesOf(p, plan.ActionUpdate))
	}
}

// TestPlanEditAndPrune: one edited field is exactly one update; a removed component is
// exactly its deletes, and apply prunes those and nothing else.
func TestPlanEditAndPrune(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.platform.Spec.Gateway.Replicas = ptr.To[int32](2)
	e.mustApply()

	e.platform.Spec.Gateway.Replicas = ptr.To[int32](3)
	p := e.plan(e.desired())
	updates := changesOf(p, plan.ActionUpdate)
	if p.Summary.Create != 0 || p.Summary.Delete != 0 || len(updates) != 1 {
		t.Fatalf("plan after editing gateway.replicas = %+v, want exactly one update", p.Summary)
	}
	u := updates[0]
	if u.Object.Kind != "Deployment" || u.Object.Name != "gateway" || len(u.Fields) != 1 || u.Fields[0].Path != "spec.replicas" {
		t.Fatalf("update = %s %+v, want Deployment gateway spec.replicas", u.Object, u.Fields)
	}
	if u.Fields[0].New != int64(3) {
		t.Fatalf("spec.replicas new value = %#v, want 3", u.Fields[0].New)
	}
	e.mustApply()

	e.platform.Spec.DataPlane.Nessie.Enabled = ptr.To(false)
	p = e.plan(e.desired())
	deletes := changesOf(p, plan.ActionDelete)
	// Other services' configuration lists nessie's endpoint, so their hashed ConfigMaps
	// are replaced (a create and a delete each); everything else deleted is nessie's.
	var replacedConfig []string
	for _, c := range changesOf(p, plan.ActionCreate) {
		if c.Object.Kind != "ConfigMap" {
			t.Fatalf("plan after disabling nessie creates %s", c.Object)
		}
		replacedConfig = append(replacedConfig, c.Object.Name[:strings.LastIndex(c.Object.Name, "-")])
	}
	nessie := 0
	for _, c := range deletes {
		switch {
		case strings.HasPrefix(c.Object.Name, "nessie"):
			nessie++
		case c.Object.Kind == "ConfigMap" && slices.Contains(replacedConfig, c.Object.Name[:strings.LastIndex(c.Object.Name, "-")]):
		default:
			t.Fatalf("plan deletes %s, which is neither nessie's nor a replaced ConfigMap", c.Object)
		}
	}
	if nessie < 4 {
		t.Fatalf("plan deletes %d of nessie's objects, want its Deployment, Service, ServiceAccount, ConfigMap (and more)", nessie)
	}
	if _, err := e.apply(func() apply.Options { o := testOptions(); o.MaxDeletes = 2; return o }()); err == nil || !strings.Contains(err.Error(), "--max-deletes") {
		t.Fatalf("apply with --max-deletes=1 = %v, want a refusal", err)
	}
	e.mustApply()
	ns := e.platform.Namespace
	if _, err := e.cluster.Kube.AppsV1().Deployments(ns).Get(t.Context(), "nessie", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("nessie Deployment after prune: %v, want NotFound", err)
	}
	for _, name := range []string{"data-service", "gateway", "ontology-service"} {
		if _, err := e.cluster.Kube.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Fatalf("prune removed or broke %s: %v", name, err)
		}
	}
	pvcs, err := e.cluster.Kube.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pvcs.Items) == 0 {
		t.Fatalf("PVCs after prune: %d, %v; want the infrastructure's PVCs kept", len(pvcs.Items), err)
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after prune has changes: %+v", p.Summary)
	}
}

// TestApplyStopsAtUnhealthyPlane: pods that cannot be scheduled stop the run in their
// plane, with the reason, and later planes are never created.
func TestApplyStopsAtUnhealthyPlane(t *testing.T) {
	t.Parallel()
	// reasoning-service is the intelligence plane's, between the data and gateway planes.
	e := newSmallEnv(t, v1alpha1.ComponentReasoningService)
	e.platform.Spec.IntelligencePlane.ReasoningService.GPU = &v1alpha1.GPUSpec{Enabled: true, Count: 16, ResourceName: "nvidia.com/gpu"}
	opts := testOptions()
	opts.PlaneTimeout = 15 * time.Second
	_, err := e.apply(opts)
	var ae *apply.ApplyError
	if !errors.As(err, &ae) {
		t.Fatalf("apply = %v, want an ApplyError", err)
	}
	if ae.Plane != "intelligence" || !strings.Contains(ae.Object, "reasoning-service") {
		t.Fatalf("apply stopped at plane %s object %s, want intelligence / reasoning-service", ae.Plane, ae.Object)
	}
	if !strings.Contains(err.Error(), "nvidia.com/gpu") {
		t.Fatalf("error %q does not say why (insufficient nvidia.com/gpu)", err)
	}
	if _, err := e.cluster.Kube.AppsV1().Deployments(e.platform.Namespace).Get(t.Context(), "gateway", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("gateway plane was applied after the intelligence plane failed: %v", err)
	}
	st := e.getPlatform().Status
	if st.Phase != v1alpha1.PhaseError {
		t.Fatalf("phase = %s, want Error", st.Phase)
	}
}

// TestApplyLock: a held lease makes a second apply fail at once; an expired one is
// taken over.
func TestApplyLock(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	ns := e.platform.Namespace
	leases := e.cluster.Kube.CoordinationV1().Leases(ns)
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: apply.LockName(e.platform.Name), Namespace: ns},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("someone-else"), LeaseDurationSeconds: ptr.To[int32](60), RenewTime: &now},
	}
	if _, err := leases.Create(t.Context(), lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := e.apply(testOptions())
	var locked *apply.LockedError
	if !errors.As(err, &locked) || locked.Holder != "someone-else" {
		t.Fatalf("apply under a held lock = %v, want a LockedError naming someone-else", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("apply under a held lock took %s, want it to fail at once", d)
	}

	// The other run crashed: its lease is two minutes past renewal.
	stale := metav1.NewMicroTime(time.Now().Add(-2 * time.Minute))
	cur, err := leases.Get(t.Context(), lease.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.RenewTime = &stale
	if _, err := leases.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.mustApply()
	if _, err := leases.Get(t.Context(), lease.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("lease after a successful apply: %v, want it released", err)
	}
}

// TestSavedPlanRefusedWhenClusterChanged: a plan saved before someone else changed an
// object is refused, so what runs is what was reviewed.
func TestSavedPlanRefusedWhenClusterChanged(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	e.platform.Spec.Gateway.Replicas = ptr.To[int32](2)
	saved := e.plan(e.desired())
	if err := plan.Verify(saved, e.plan(e.desired())); err != nil {
		t.Fatalf("an unchanged cluster refused the saved plan: %v", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"someone":"changed-this"}}}`)
	if _, err := e.cluster.Kube.AppsV1().Deployments(e.platform.Namespace).Patch(t.Context(), "gateway", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err := plan.Verify(saved, e.plan(e.desired()))
	var stale *plan.StalePlanError
	if !errors.As(err, &stale) || stale.Object.Name != "gateway" {
		t.Fatalf("Verify after a change = %v, want a StalePlanError naming gateway", err)
	}
}

// TestConflictWithAnotherManager: a field another manager owns shows as a conflict in
// the plan, stops apply before any write, and --force-conflicts takes it over.
func TestConflictWithAnotherManager(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	ns := e.platform.Namespace
	// Another tool takes ownership of the gateway's replicas with its own apply.
	other := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"gateway","namespace":"` + ns + `"},"spec":{"replicas":2}}`)
	if _, err := e.cluster.Kube.AppsV1().Deployments(ns).Patch(t.Context(), "gateway", types.ApplyPatchType, other, metav1.PatchOptions{FieldManager: "other-tool", Force: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	e.platform.Spec.Gateway.Replicas = ptr.To[int32](3)
	p := e.plan(e.desired())
	if p.Summary.Conflicts == 0 {
		t.Fatalf("plan shows no conflict: %+v", p.Summary)
	}
	c := changesOf(p, plan.ActionUpdate)[0]
	if c.Conflicts[0].Manager != "other-tool" || c.Conflicts[0].Field != ".spec.replicas" {
		t.Fatalf("conflict = %+v, want .spec.replicas owned by other-tool", c.Conflicts[0])
	}
	e.writes.Store(0)
	_, err := e.apply(testOptions())
	var ce *apply.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("apply = %v, want a ConflictError with the way out", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a refused apply sent %d writes, want 0", n)
	}
	opts := testOptions()
	opts.ForceConflicts = true
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply --force-conflicts: %v", err)
	}
	d, err := e.cluster.Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 {
		t.Fatalf("gateway replicas after forced apply = %v, %v; want 3", d.Spec.Replicas, err)
	}
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// TestApplyRejectedObjectWritesNoPlane: on a first install into a namespace that does
// not exist yet, an object the API server would reject (here a Service port out of
// range, through a user patch) stops the run after the namespace is created and before
// any plane object is written.
func TestApplyRejectedObjectWritesNoPlane(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	ns := testcluster.UniqueName(t, "fresh")
	e.platform.Namespace = ns
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.cluster.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	e.patches = []render.Patch{{
		Target: &render.PatchTarget{Kind: "Service", Name: "gateway"},
		Patch:  `[{"op": "replace", "path": "/spec/ports/0/port", "value": 99999}]`,
	}}
	_, err := e.apply(testOptions())
	if err == nil || !strings.Contains(err.Error(), "Service "+ns+"/gateway") || !strings.Contains(err.Error(), "rejects") {
		t.Fatalf("apply = %v, want the API server's rejection of Service %s/gateway", err, ns)
	}
	if _, err := e.cluster.Kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace %s: %v (it is created before validation)", ns, err)
	}
	for _, list := range []func() (int, error){
		func() (int, error) {
			l, err := e.cluster.Kube.AppsV1().StatefulSets(ns).List(t.Context(), metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := e.cluster.Kube.CoreV1().ServiceAccounts(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kubectl-onto"})
			return len(l.Items), err
		},
	} {
		if n, err := list(); err != nil || n != 0 {
			t.Fatalf("objects of the platform in %s after a rejected plan: %d, %v; want none", ns, n, err)
		}
	}
}

// hasField reports whether change c changes the field at path.
func hasField(c plan.Change, path string) (plan.FieldChange, bool) {
	for _, f := range c.Fields {
		if f.Path == path {
			return f, true
		}
	}
	return plan.FieldChange{}, false
}

func (e *env) mustConverge() {
	e.t.Helper()
	e.mustApply()
	if p := e.plan(e.desired()); p.HasChanges() {
		e.t.Fatalf("plan right after apply has changes: %+v", p.Summary)
	}
}

// TestApplyEdits walks edits that move objects between planes' slices, drop a kind,
// hand replicas to an autoscaler and disable a stateful component, converging after each.
func TestApplyEdits(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	ns := e.platform.Namespace
	e.platform.Spec.Gateway.Replicas = ptr.To[int32](3)
	e.platform.Spec.Gateway.Ingress = &v1alpha1.IngressSpec{Enabled: true, Host: "onto.example.com"}
	e.mustConverge()

	// Every service's hashed ConfigMap is replaced: deletes in every plane.
	e.platform.Spec.Observability.Logging.Level = "DEBUG"
	p := e.plan(e.desired())
	services := map[string]int{} // the platform's services (not its stateful infrastructure), by plane
	for _, c := range e.platform.Spec.Components() {
		if c.Service != nil && c.Enabled() {
			services[string(c.Plane)]++
		}
	}
	replaced := map[string]int{}
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			if c.Action == plan.ActionDelete && c.Object.Kind == "ConfigMap" {
				replaced[pl.Name]++
			}
		}
	}
	if got := len(changesOf(p, plan.ActionDelete)); got != len(changesOf(p, plan.ActionCreate)) || !maps.Equal(replaced, services) || len(services) < 3 {
		t.Fatalf("log level change: %d deletes, %d creates, replaced ConfigMaps by plane %v; want one replaced ConfigMap per service %v", got, len(changesOf(p, plan.ActionCreate)), replaced, services)
	}
	e.mustConverge()

	// The Ingress kind is no longer rendered at all.
	e.platform.Spec.Gateway.Ingress = nil
	p = e.plan(e.desired())
	if d := changesOf(p, plan.ActionDelete); len(d) != 1 || d[0].Object.Kind != "Ingress" {
		t.Fatalf("dropping the ingress: deletes %+v, want the Ingress only", d)
	}
	e.mustConverge()
	if _, err := e.cluster.Kube.NetworkingV1().Ingresses(ns).Get(t.Context(), "gateway", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Ingress after prune: %v, want NotFound", err)
	}

	// Autoscaling takes the replicas over: no scale-down to 1 on the way.
	e.platform.Spec.Gateway.Replicas = nil
	e.platform.Spec.Gateway.Autoscaling = &v1alpha1.AutoscalingSpec{Enabled: true, MinReplicas: 2, MaxReplicas: 5, TargetCPUUtilization: 80,
		ScaleUpStabilizationSeconds: ptr.To[int32](60), ScaleDownStabilizationSeconds: ptr.To[int32](300)}
	p = e.plan(e.desired())
	for _, c := range changesOf(p, plan.ActionUpdate) {
		if f, ok := hasField(c, "spec.replicas"); ok && c.Object.Name == "gateway" {
			t.Fatalf("turning autoscaling on changes the gateway's replicas %v → %v", f.Old, f.New)
		}
	}
	e.mustApply()
	d, err := e.cluster.Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 {
		t.Fatalf("gateway replicas after autoscaling was turned on: %v, %v; want 3 until the HPA decides", d.Spec.Replicas, err)
	}

	// Disabling postgres keeps its data: the PVC and the generated Secret.
	e.platform.Spec.Infrastructure.Postgres.Enabled = ptr.To(false)
	p = e.plan(e.desired())
	for _, c := range changesOf(p, plan.ActionDelete) {
		if c.Object.Kind == "Secret" || c.Object.Kind == "PersistentVolumeClaim" {
			t.Fatalf("disabling postgres deletes %s", c.Object)
		}
	}
	e.mustApply()
	if _, err := e.cluster.Kube.CoreV1().Secrets(ns).Get(t.Context(), "postgres", metav1.GetOptions{}); err != nil {
		t.Fatalf("postgres Secret after disabling postgres: %v", err)
	}
}

// TestPlanObjectOfAnotherPlatform: an object with a rendered name that belongs to
// another platform's inventory is a conflict, not a silent takeover.
func TestPlanObjectOfAnotherPlatform(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	ns := e.platform.Namespace
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gateway", Namespace: ns,
		Labels: map[string]string{inventory.PartOfLabel: inventory.ID(ns, "someone-else")}}}
	if _, err := e.cluster.Kube.CoreV1().ServiceAccounts(ns).Create(t.Context(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := e.plan(e.desired())
	var found bool
	for _, c := range changesOf(p, plan.ActionUpdate) {
		if c.Object.Kind == "ServiceAccount" && c.Object.Name == "gateway" && len(c.Conflicts) > 0 && strings.Contains(c.Conflicts[0].Message, "another platform") {
			found = true
		}
	}
	if !found {
		t.Fatalf("plan shows no inventory conflict on ServiceAccount gateway: %+v", p.Summary)
	}
	var ce *apply.ConflictError
	if _, err := e.apply(testOptions()); !errors.As(err, &ce) {
		t.Fatalf("apply = %v, want a ConflictError", err)
	}
}

// TestLockLease: a live lease is never shared, even under the same holder name; a run
// whose lease was taken over learns it from KeepAlive and its release leaves the new
// holder's lease alone.
func TestLockLease(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	clock := time.Now()
	now := func() time.Time { return clock }
	first := &apply.Lock{Kube: c.Kube, Namespace: ns, Name: "l", Holder: "same", TTL: 3 * time.Second, Now: now}
	if err := first.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	second := &apply.Lock{Kube: c.Kube, Namespace: ns, Name: "l", Holder: "same", TTL: 3 * time.Second, Now: now}
	var locked *apply.LockedError
	if err := second.Acquire(t.Context()); !errors.As(err, &locked) {
		t.Fatalf("second Acquire of a live lease = %v, want a LockedError", err)
	}
	// The first run stalls past its TTL; the second takes the lease over.
	clock = clock.Add(10 * time.Second)
	if err := second.Acquire(t.Context()); err != nil {
		t.Fatalf("Acquire of an expired lease: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var lost *apply.LostError
	if err := first.KeepAlive(ctx); !errors.As(err, &lost) {
		t.Fatalf("KeepAlive of a lease taken over = %v, want a LostError", err)
	}
	if err := first.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	lease, err := c.Kube.CoordinationV1().Leases(ns).Get(t.Context(), "l", metav1.GetOptions{})
	if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") != "same" {
		t.Fatalf("the new holder's lease after the old run's release: %v, %v", lease, err)
	}
}

// checkProofAgreesWithServer dry-runs every object the managed fields prove unchanged
// (plan.ProvenUnchanged) and fails if the API server would change any of it: the proof
// replaces exactly these requests, so it must never say unchanged where they would not.
func (e *env) checkProofAgreesWithServer() {
	e.t.Helper()
	d := e.desired()
	proven := 0
	var unproven []string
	for _, obj := range append([]*unstructured.Unstructured{d.CRD, d.Platform}, d.Objects()...) {
		ri, err := e.clients.Resource(obj)
		if err != nil {
			e.t.Fatal(err)
		}
		live, err := ri.Get(e.t.Context(), obj.GetName(), metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("get %s: %v", plan.RefOf(obj), err)
		}
		if !plan.ProvenUnchanged(obj, live, plan.FieldManager) {
			unproven = append(unproven, plan.RefOf(obj).String())
			continue
		}
		proven++
		data, err := obj.MarshalJSON()
		if err != nil {
			e.t.Fatal(err)
		}
		merged, err := ri.Patch(e.t.Context(), obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: plan.FieldManager, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			e.t.Fatalf("dry-run %s: %v", plan.RefOf(obj), err)
		}
		if diff := plan.Diff(live, merged); len(diff) != 0 {
			e.t.Errorf("%s is proven unchanged, but its dry-run changes %+v", plan.RefOf(obj), diff)
		}
	}
	if proven == 0 {
		e.t.Error("no object proven unchanged: the check checked nothing")
	}
	e.t.Logf("%d objects proven unchanged, each confirmed by its dry-run; not proven (dry-run by a plan): %v", proven, unproven)
}

// TestPlanSeesWhatTheProofCannot: an object another manager changed is dry-run, and
// the plan names the change and the manager; a field another manager adds beside
// ours changes nothing and costs no dry-run.
func TestPlanSeesWhatTheProofCannot(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	ns := e.platform.Namespace
	e.checkProofAgreesWithServer()
	e.dryRuns.Store(0)
	if p := e.plan(e.desired()); p.HasChanges() || e.dryRuns.Load() != 0 {
		t.Fatalf("plan of the unchanged platform: %+v with %d dry-runs, want no change and none", p.Summary, e.dryRuns.Load())
	}

	// A label of another tool beside ours: not a change of the platform.
	mark := []byte(`{"metadata":{"labels":{"team":"data"}}}`)
	if _, err := e.cluster.Kube.CoreV1().ServiceAccounts(ns).Patch(t.Context(), "gateway", types.MergePatchType, mark, metav1.PatchOptions{FieldManager: "other-tool"}); err != nil {
		t.Fatal(err)
	}
	// `kubectl set image` on the gateway: an update by another manager takes the field.
	dep, err := e.cluster.Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := dep.Spec.Template.Spec.Containers[0].Image
	dep.Spec.Template.Spec.Containers[0].Image = "registry.example/gateway:hotfix"
	if _, err := e.cluster.Kube.AppsV1().Deployments(ns).Update(t.Context(), dep, metav1.UpdateOptions{FieldManager: "kubectl-set"}); err != nil {
		t.Fatal(err)
	}
	e.dryRuns.Store(0)
	p := e.plan(e.desired())
	updates := changesOf(p, plan.ActionUpdate)
	if len(updates) != 1 || updates[0].Object.Name != "gateway" || updates[0].Object.Kind != "Deployment" {
		t.Fatalf("updates = %+v, want the gateway Deployment alone", updates)
	}
	f, ok := hasField(updates[0], "spec.template.spec.containers[name=gateway].image")
	if !ok || f.New != want {
		t.Errorf("gateway change %+v, want the image set back to %s", updates[0].Fields, want)
	}
	if len(updates[0].Conflicts) == 0 || updates[0].Conflicts[0].Manager != "kubectl-set" {
		t.Errorf("conflicts %+v, want the image owned by kubectl-set", updates[0].Conflicts)
	}
	if n := e.dryRuns.Load(); n != 2 {
		// The drifted Deployment's dry-run, then the forced one that shows the rest.
		t.Errorf("plan sent %d dry-runs, want 2 (the drifted Deployment's, plain and forced)", n)
	}
}
