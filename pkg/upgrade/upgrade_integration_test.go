/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// upEnv is a minimal platform installed at 1.5.0 in a namespace of its own.
type upEnv struct {
	t       *testing.T
	c       *testcluster.Cluster
	clients *kube.Clients
	p       *v1alpha1.OntoPlatform

	// editRelease changes the target's release entry (a bad or migrating release).
	editRelease func(*release.Release)
	// direct: a rollback applies its revision plane by plane, without canaries (the
	// CLI's default; the procedure's tests set it where they mean it).
	direct bool
	// targetVersion, when set, is the target spec's version (runTo): a release only
	// a --releases directory has, made from a shipped one by editRelease.
	targetVersion string

	mu     sync.Mutex
	events []apply.Event
	// during is what kstatus made of the live OntoPlatform at the run's first
	// component steps, read from the run's own progress events.
	during []kstatus.Status
}

func installAt(t *testing.T, version string, edit ...func(*v1alpha1.OntoPlatformSpec)) *upEnv {
	t.Helper()
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", c.Namespace(t))
	p.Spec.Version = version
	for _, f := range edit {
		f(&p.Spec)
	}
	ontotest.Install(t, clients, p)
	return &upEnv{t: t, c: c, clients: clients, p: p}
}

// upgrade runs the procedure towards version (with patches on the target) or, with
// action rollback, back to revision n.
func (e *upEnv) run(action, version string, revision int64, atomic bool, patches ...render.Patch) (*upgrade.Result, error) {
	e.t.Helper()
	opts := upgrade.DefaultOptions()
	opts.Apply = ontotest.ApplyOptions()
	opts.CanarySoak, opts.CanaryTimeout, opts.Atomic, opts.Action = 2*time.Second, 90*time.Second, atomic, action
	if len(patches) > 0 {
		// The patches are crash loops, which the test cluster starts 3 s after a pod
		// runs (onto-pod-crashloop in hack/testcluster/manifests/chaos-stages.yaml):
		// a 2 s soak raced it, and a crash found after the canary moved the next
		// component too.
		opts.CanarySoak = 5 * time.Second
	}
	opts.Apply.Action = action
	opts.Direct = e.direct && action == "rollback"
	catalog := ontotest.Catalog(e.t)
	u := &upgrade.Upgrade{
		Clients: e.clients, Catalog: catalog, Namespace: e.p.Namespace, Name: e.p.Name, Options: opts, ToRevision: revision,
		Reverse: action == "rollback",
		Applier: &apply.Applier{Clients: e.clients, Now: time.Now, Observer: func(ev apply.Event) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, ev)
			if ev.Type == upgrade.EventUpgradeStep && ev.Object != "" && len(e.during) < 3 {
				e.during = append(e.during, e.kstatus().Status)
			}
		}},
	}
	if action == "upgrade" {
		spec := *e.p.Spec.DeepCopy()
		spec.Version = version
		if e.editRelease != nil && e.targetVersion != "" {
			spec.Version = e.targetVersion
		}
		rel := *ontotest.Release(e.t, version)
		if e.editRelease != nil {
			rel.Components = maps.Clone(rel.Components)
			e.editRelease(&rel)
		}
		u.Target = &upgrade.Target{Spec: spec, Release: rel, Patches: patches}
	}
	return u.Run(e.t.Context())
}

// kstatus is what sigs.k8s.io/cli-utils' kstatus, the library Flux and kapp judge
// health with, makes of the live OntoPlatform.
func (e *upEnv) kstatus() *kstatus.Result {
	e.t.Helper()
	p := e.platform()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		e.t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.Kind))
	res, err := kstatus.Compute(u)
	if err != nil {
		e.t.Fatalf("kstatus: %v", err)
	}
	return res
}

// runTo upgrades to version, rendered from the shipped release base (editRelease
// gives it that version), with patches on the target.
func (e *upEnv) runTo(base, version string, patches ...render.Patch) (*upgrade.Result, error) {
	e.t.Helper()
	e.targetVersion = version
	defer func() { e.targetVersion = "" }()
	return e.run("upgrade", base, 0, false, patches...)
}

func (e *upEnv) platform() *v1alpha1.OntoPlatform {
	e.t.Helper()
	return ontotest.Live(e.t, e.clients, e.p.Namespace, e.p.Name)
}

// versions maps each Deployment and StatefulSet of the platform to the platform
// version its pod template runs (templateVersion), and counts canaries.
func (e *upEnv) versions() (map[string]string, int) {
	e.t.Helper()
	ctx, ns := e.t.Context(), e.p.Namespace
	out := map[string]string{}
	canaries := 0
	deps, err := e.clients.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range deps.Items {
		if d.Labels[v1alpha1.LabelTrack] == v1alpha1.TrackCanary {
			canaries++
			continue
		}
		out[d.Name] = d.Spec.Template.Labels[v1alpha1.LabelVersion]
	}
	sts, err := e.clients.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range sts.Items {
		out[s.Name] = templateVersion(e.t, s.Name, s.Spec.Template.Labels[v1alpha1.LabelVersion])
	}
	return out, canaries
}

// templateVersion is the platform version whose release a StatefulSet's pod template
// runs: the template's version label is the tag of the component's own image (so a
// release that keeps the image restarts nothing), which the catalog maps back to the
// release that pins it. The shipped releases pin different images, so one matches;
// otherwise the label is returned as it is.
func templateVersion(t testing.TB, component, label string) string {
	t.Helper()
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range catalog.Versions() {
		if img, err := ontotest.Release(t, v).Image(component, "", ""); err == nil && strings.HasSuffix(img, ":"+label) {
			return v
		}
	}
	return label
}

func (e *upEnv) configMaps() int {
	e.t.Helper()
	cms, err := e.clients.Kube.CoreV1().ConfigMaps(e.p.Namespace).List(e.t.Context(), metav1.ListOptions{LabelSelector: inventory.PartOfLabel})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(cms.Items)
}

func lastRevision(p *v1alpha1.OntoPlatform) v1alpha1.Revision {
	return p.Status.History[len(p.Status.History)-1]
}

// TestUpgradeAndRollback: 1.5.0 → 1.6.0 moves every workload, leaves no canary and no
// 1.5.0 ConfigMap, and records one revision with a snapshot; rollback returns every
// workload to 1.5.0 and records a rollback revision.
func TestUpgradeAndRollback(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", func(s *v1alpha1.OntoPlatformSpec) { s.Remediation.Memory.Enabled = true })
	cmsBefore := e.configMaps()
	// The watch raised the gateway's memory limit after an OOM kill: the upgrade
	// keeps it raised.
	raised := e.remediate("gateway")
	res, err := e.run("upgrade", "1.6.0", 0, false)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if got := e.memoryLimit("gateway"); got.Cmp(raised) != 0 {
		t.Errorf("gateway's memory limit after the upgrade: %s, want %s (status.remediations)", &got, &raised)
	}
	vs, canaries := e.versions()
	for name, v := range vs {
		if v != "1.6.0" {
			t.Errorf("%s runs %s after the upgrade, want 1.6.0", name, v)
		}
	}
	if canaries != 0 || e.configMaps() != cmsBefore {
		t.Errorf("after the upgrade: %d canaries, %d ConfigMaps (before %d); want none and the same count (old ones pruned)", canaries, e.configMaps(), cmsBefore)
	}
	if len(res.Steps) != len(vs) {
		t.Errorf("%d steps %v for %d workloads", len(res.Steps), res.Steps, len(vs))
	}
	p := e.platform()
	last := lastRevision(p)
	if p.Status.Upgrade != nil || p.Status.Phase != v1alpha1.PhaseRunning || p.Status.Version != "1.6.0" || p.Spec.Version != "1.6.0" {
		t.Fatalf("status after the upgrade: upgrade %+v, phase %s, version %s, spec %s", p.Status.Upgrade, p.Status.Phase, p.Status.Version, p.Spec.Version)
	}
	if last.Action != "upgrade" || last.Result != v1alpha1.RevisionSucceeded || last.Snapshot == "" || len(p.Status.History) != 2 {
		t.Fatalf("history after the upgrade: %+v", p.Status.History)
	}
	// The canary and soak ran for a Deployment, the partition for none (one replica).
	var sawSoak bool
	for _, ev := range e.events {
		sawSoak = sawSoak || (ev.Type == apply.EventUpgradeStep && ev.Object == "gateway" && strings.Contains(ev.Message, "gateway-canary ready"))
	}
	if !sawSoak {
		t.Error("no soak of gateway-canary was reported")
	}

	if _, err := e.run("upgrade", "1.6.0", 0, false); !errors.As(err, new(*upgrade.NothingToDoError)) {
		t.Fatalf("a second upgrade to the same version: %v, want NothingToDoError", err)
	}

	if _, err := e.run("rollback", "", 1, false); err != nil {
		t.Fatalf("rollback to revision 1: %v", err)
	}
	vs, canaries = e.versions()
	for name, v := range vs {
		if v != "1.5.0" {
			t.Errorf("%s runs %s after the rollback, want 1.5.0", name, v)
		}
	}
	p = e.platform()
	if last := lastRevision(p); canaries != 0 || last.Action != "rollback" || last.Version != "1.5.0" || p.Status.Version != "1.5.0" || p.Spec.Version != "1.5.0" {
		t.Fatalf("after the rollback: %d canaries, last revision %+v, status version %s, spec %s", canaries, last, p.Status.Version, p.Spec.Version)
	}
}

// memoryLimit is the memory limit of Deployment name's first container.
func (e *upEnv) memoryLimit(name string) resource.Quantity {
	e.t.Helper()
	d, err := e.clients.Kube.AppsV1().Deployments(e.p.Namespace).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
}

// remediate records in the status, as the watch does after an OOM kill, a raise of
// Deployment name's memory limit to twice the live one, and returns the raised limit.
func (e *upEnv) remediate(name string) resource.Quantity {
	e.t.Helper()
	from := e.memoryLimit(name)
	to := *resource.NewQuantity(2*from.Value(), resource.BinarySI)
	rem := v1alpha1.Remediation{Component: name, Container: name, Resource: "memory", From: from.String(), To: to.String(), SpecLimit: from.String(), Time: metav1.Now()}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"remediations": []v1alpha1.Remediation{rem}}})
	if err != nil {
		e.t.Fatal(err)
	}
	ri := e.clients.Dynamic.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms")).Namespace(e.p.Namespace)
	if _, err := ri.Patch(e.t.Context(), e.p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatal(err)
	}
	return to
}

// crashLoop makes every pod of Deployment name's new template crash-loop.
func crashLoop(t *testing.T, name string) render.Patch { return crashLoopOf(t, "Deployment", name) }

// crashLoopOf makes every pod of workload kind/name's new template crash-loop.
func crashLoopOf(t *testing.T, kind, name string) render.Patch {
	t.Helper()
	ps, err := render.LoadPatches("bad-release", fmt.Appendf(nil, `apiVersion: apps/v1
kind: %s
metadata:
  name: %s
spec:
  template:
    metadata:
      labels:
        %s: %s
`, kind, name, testcluster.ChaosLabel, testcluster.ChaosCrashLoop))
	if err != nil || len(ps) != 1 {
		t.Fatalf("patch: %v", err)
	}
	return ps[0]
}

// TestUpgradeFailedComponentReturns: a data-service that crash-loops on the new
// version fails in its canary; it returns to 1.5.0 and stays available, the control
// plane before it stays on 1.6.0, the planes after it are untouched, and the error
// names it. apply refuses meanwhile; the same upgrade without the fault finishes.
func TestUpgradeFailedComponentReturns(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	_, err := e.run("upgrade", "1.6.0", 0, false, crashLoop(t, "data-service"))
	var ce *upgrade.ComponentError
	if !errors.As(err, &ce) || ce.Component != "data-service" || !ce.RolledBack {
		t.Fatalf("upgrade with a crash-looping data-service: %v, want a ComponentError for data-service, rolled back", err)
	}
	vs, canaries := e.versions()
	want := map[string]string{"postgres": "1.6.0", "ontology-service": "1.6.0", "data-service": "1.5.0", "nessie": "1.5.0", "gateway": "1.5.0"}
	for name, v := range want {
		if vs[name] != v {
			t.Errorf("%s runs %s, want %s", name, vs[name], v)
		}
	}
	if canaries != 0 {
		t.Errorf("%d canaries left after the failure", canaries)
	}
	dep, err := e.clients.Kube.AppsV1().Deployments(e.p.Namespace).Get(t.Context(), "data-service", metav1.GetOptions{})
	if err != nil || dep.Status.AvailableReplicas != *dep.Spec.Replicas {
		t.Fatalf("data-service after its failure: %v, available %d", err, dep.Status.AvailableReplicas)
	}
	p := e.platform()
	if u := p.Status.Upgrade; u == nil || u.FailedComponent != "data-service" || u.To != "1.6.0" {
		t.Fatalf("status.upgrade after the failure: %+v", u)
	}
	if last := lastRevision(p); last.Result != v1alpha1.RevisionFailed || !strings.Contains(last.Message, "data-service") {
		t.Fatalf("last revision after the failure: %+v", last)
	}
	// What kubectl wait and Flux read: not ready while it ran, failed after, naming
	// the component.
	if len(e.during) == 0 || slices.ContainsFunc(e.during, func(s kstatus.Status) bool { return s != kstatus.InProgressStatus }) {
		t.Errorf("kstatus during the upgrade: %v, want InProgress at every step", e.during)
	}
	if res := e.kstatus(); res.Status != kstatus.FailedStatus || !strings.Contains(res.Message, "data-service") {
		t.Errorf("kstatus after the failed upgrade: %s (%s), want Failed naming data-service", res.Status, res.Message)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "data-service") {
		t.Errorf("Ready after the failed upgrade: %+v, want False naming data-service", c)
	}

	// A plain apply would roll everything at once: refused, naming both ways out.
	opts := ontotest.ApplyOptions()
	opts.Release = ontotest.Release(t, "1.5.0")
	_, err = (&apply.Applier{Clients: e.clients, Now: time.Now}).Apply(t.Context(), ontotest.Desired(t, e.p), opts)
	var busy *apply.UpgradeInProgressError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "kubectl onto rollback") {
		t.Fatalf("apply during a stopped upgrade: %v, want UpgradeInProgressError", err)
	}

	// A fixed release: the same command resumes from data-service and finishes.
	res, err := e.run("upgrade", "1.6.0", 0, false)
	if err != nil {
		t.Fatalf("resumed upgrade: %v", err)
	}
	if res.Steps[0] != "data-service" {
		t.Errorf("the resumed upgrade started at %v, want data-service first", res.Steps)
	}
	vs, _ = e.versions()
	for name, v := range vs {
		if v != "1.6.0" {
			t.Errorf("%s runs %s after the resumed upgrade", name, v)
		}
	}
	if p := e.platform(); p.Status.Upgrade != nil || p.Status.Version != "1.6.0" {
		t.Fatalf("after the resumed upgrade: upgrade %+v, version %s", p.Status.Upgrade, p.Status.Version)
	}
	if res := e.kstatus(); res.Status != kstatus.CurrentStatus {
		t.Errorf("kstatus after the resumed upgrade: %s (%s), want Current", res.Status, res.Message)
	}
}

// TestUpgradeAtomic: with Atomic, a failed component returns every component the run
// moved: all on 1.5.0, no upgrade left in status, the revision RolledBack.
func TestUpgradeAtomic(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	_, err := e.run("upgrade", "1.6.0", 0, true, crashLoop(t, "ontology-service"))
	if !errors.As(err, new(*upgrade.ComponentError)) {
		t.Fatalf("atomic upgrade with a crash-looping ontology-service: %v", err)
	}
	vs, canaries := e.versions()
	for name, v := range vs {
		if v != "1.5.0" {
			t.Errorf("%s runs %s after an atomic failure, want 1.5.0", name, v)
		}
	}
	p := e.platform()
	if last := lastRevision(p); canaries != 0 || p.Status.Upgrade != nil || last.Result != v1alpha1.RevisionRolledBack || p.Spec.Version != "1.5.0" {
		t.Fatalf("after an atomic failure: %d canaries, upgrade %+v, last revision %+v, spec %s", canaries, p.Status.Upgrade, last, p.Spec.Version)
	}
	progressing := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionProgressing)
	if p.Status.Phase != v1alpha1.PhaseRunning || progressing == nil || progressing.Reason != v1alpha1.ReasonRolledBack ||
		meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionDegraded) {
		t.Fatalf("conditions after an atomic failure: phase %s, %+v", p.Status.Phase, p.Status.Conditions)
	}
}

// TestUpgradeStatefulSetPartition: a StatefulSet of three moves its highest ordinal
// first and soaks it; a bad postgres template fails there, the set returns to 1.5.0
// with the broken pod replaced (OrderedReady would keep it), and every pod is ready.
func TestUpgradeStatefulSetPartition(t *testing.T) {
	t.Parallel()
	three := func(s *v1alpha1.OntoPlatformSpec) { s.Infrastructure.Postgres.Replicas = ptr.To(int32(3)) }
	e := installAt(t, "1.5.0", ontotest.Small, three)
	e.p.Spec.Infrastructure.Postgres.Replicas = ptr.To(int32(3))
	_, err := e.run("upgrade", "1.6.0", 0, false, crashLoopOf(t, "StatefulSet", "postgres"))
	var ce *upgrade.ComponentError
	if !errors.As(err, &ce) || ce.Component != "postgres" || !ce.RolledBack {
		t.Fatalf("upgrade with a crash-looping postgres: %v, want postgres failed and returned", err)
	}
	var partitioned bool
	for _, ev := range e.events {
		partitioned = partitioned || (ev.Object == "postgres" && strings.Contains(ev.Message, "highest ordinal first"))
	}
	if !partitioned {
		t.Error("postgres was not updated highest ordinal first")
	}
	sts, err := e.clients.Kube.AppsV1().StatefulSets(e.p.Namespace).Get(t.Context(), "postgres", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := templateVersion(t, "postgres", sts.Spec.Template.Labels[v1alpha1.LabelVersion]); v != "1.5.0" || sts.Status.ReadyReplicas != 3 || sts.Status.UpdateRevision != sts.Status.CurrentRevision {
		t.Fatalf("postgres after its failure: template %s, ready %d/3, revisions %s/%s", v, sts.Status.ReadyReplicas, sts.Status.CurrentRevision, sts.Status.UpdateRevision)
	}
	if _, err := e.run("upgrade", "1.6.0", 0, false); err != nil {
		t.Fatalf("the upgrade with a good postgres: %v", err)
	}
	sts, err = e.clients.Kube.AppsV1().StatefulSets(e.p.Namespace).Get(t.Context(), "postgres", metav1.GetOptions{})
	if err != nil || templateVersion(t, "postgres", sts.Spec.Template.Labels[v1alpha1.LabelVersion]) != "1.6.0" || sts.Status.ReadyReplicas != 3 {
		t.Fatalf("postgres after the upgrade: %v, ready %d", err, sts.Status.ReadyReplicas)
	}
	if p := sts.Spec.UpdateStrategy.RollingUpdate; p != nil && p.Partition != nil && *p.Partition != 0 {
		t.Fatalf("postgres keeps partition %d after the upgrade", *p.Partition)
	}
}

// cpuRequests sums the cpu requests (millicores) of every pod p runs, and gives the
// smallest Deployment pod's.
func cpuRequests(t *testing.T, p *v1alpha1.OntoPlatform) (total, smallestDeploymentPod int64) {
	t.Helper()
	smallestDeploymentPod = math.MaxInt64
	for _, o := range ontotest.Desired(t, p).Objects() {
		if o.GetKind() != "Deployment" && o.GetKind() != "StatefulSet" {
			continue
		}
		replicas, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		var pod int64
		for _, c := range containers {
			cpu, _, _ := unstructured.NestedString(c.(map[string]any), "resources", "requests", "cpu")
			if cpu != "" {
				q := resource.MustParse(cpu)
				pod += q.MilliValue()
			}
		}
		total += replicas * pod
		if o.GetKind() == "Deployment" && pod > 0 {
			smallestDeploymentPod = min(smallestDeploymentPod, pod)
		}
	}
	return total, smallestDeploymentPod
}

// TestUpgradeCanaryOverQuota: a quota with room for the running pods but not for one
// canary fails the first Deployment's canary at once, with the quota's message, not
// at --canary-timeout; the component stays on 1.5.0.
func TestUpgradeCanaryOverQuota(t *testing.T) {
	t.Parallel()
	var quota int64
	tight := func(s *v1alpha1.OntoPlatformSpec) {
		p := &v1alpha1.OntoPlatform{Spec: *s.DeepCopy()}
		p.Name, p.Namespace = "sizing", "sizing"
		total, smallest := cpuRequests(t, p)
		quota = total + smallest/2
		if s.Tenancy == nil {
			s.Tenancy = &v1alpha1.TenancySpec{Mode: "namespace"}
		}
		s.Tenancy.ResourceQuota = corev1.ResourceList{corev1.ResourceRequestsCPU: *resource.NewMilliQuantity(quota, resource.DecimalSI)}
	}
	e := installAt(t, "1.5.0", ontotest.Small, tight)
	start := time.Now()
	_, err := e.run("upgrade", "1.6.0", 0, false)
	var ce *upgrade.ComponentError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("upgrade under a quota of %dm cpu: %v, want a component failing on the quota", quota, err)
	}
	if took := time.Since(start); took > 80*time.Second {
		t.Errorf("the quota failure took %s: it waited out the canary timeout", took)
	}
	vs, canaries := e.versions()
	if vs[ce.Component] != "1.5.0" || canaries != 0 {
		t.Fatalf("after the quota failure: %s runs %s, %d canaries", ce.Component, vs[ce.Component], canaries)
	}
}

// TestUpgradePreviewWritesNothing: the dry run of an upgrade (its steps and the plan of
// the target) sends no write and does not take the lock.
func TestUpgradePreviewWritesNothing(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	counter := bench.NewCounter()
	cfg := rest.CopyConfig(e.c.Config)
	cfg.Wrap(counter.Wrap)
	clients, err := kube.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := upgrade.DefaultOptions()
	u := &upgrade.Upgrade{Clients: clients, Catalog: ontotest.Catalog(t), ToVersion: "1.6.0", Namespace: e.p.Namespace, Name: e.p.Name,
		Options: opts, Applier: &apply.Applier{Clients: clients, Now: time.Now}}
	pv, err := u.Preview(t.Context())
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	counts := counter.Take()
	if counts.Writes() != 0 || counts[bench.VerbLock] != 0 {
		t.Fatalf("the preview sent %s; want no write and no lock request", counts)
	}
	if pv.From != "1.5.0" || pv.To != "1.6.0" || len(pv.Steps) == 0 || pv.Steps[0] != "postgres" || !pv.Plan.HasChanges() {
		t.Fatalf("preview: %s → %s, steps %v, plan has changes %t", pv.From, pv.To, pv.Steps, pv.Plan.HasChanges())
	}
	if vs, _ := e.versions(); vs["gateway"] != "1.5.0" {
		t.Fatalf("gateway runs %s after a preview", vs["gateway"])
	}
}

// migrating gives data-service a migration Job in the target release.
func migrating(m release.Migration) func(*release.Release) {
	return func(r *release.Release) {
		img := r.Components["data-service"]
		img.Migration = &m
		r.Components["data-service"] = img
	}
}

// TestUpgradeMigration: a release's migration Job runs (and completes) before its
// component's canary.
func TestUpgradeMigration(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	jobs := e.clients.Kube.BatchV1().Jobs(e.p.Namespace)

	// A migration runs once, before the canary of its component.
	e.editRelease = migrating(release.Migration{Args: []string{"migrate", "--to", "1.6.0"}, BackwardCompatible: true})
	e.events = nil
	if _, err := e.run("upgrade", "1.6.0", 0, false); err != nil {
		t.Fatalf("upgrade with a good migration: %v", err)
	}
	job, err := jobs.Get(t.Context(), "data-service-migrate-1-6-0", metav1.GetOptions{})
	if err != nil || job.Status.Succeeded != 1 {
		t.Fatalf("migration Job: %v, succeeded %d", err, job.Status.Succeeded)
	}
	migrated, canary := -1, -1
	for i, ev := range e.events {
		if ev.Object == "data-service" && strings.Contains(ev.Message, "migration data-service-migrate-1-6-0 running") && migrated < 0 {
			migrated = i
		}
		if ev.Object == "data-service" && strings.HasPrefix(ev.Message, "canary:") && canary < 0 {
			canary = i
		}
	}
	if migrated < 0 || canary < migrated {
		t.Fatalf("the migration (event %d) did not run before the canary (event %d)", migrated, canary)
	}
}

// TestUpgradeMigrationNotBackwardCompatible: data-service migrates its data in a way
// 1.5.0 cannot read, then fails: it is not returned, the error and status say why and
// that the way out is forward.
func TestUpgradeMigrationNotBackwardCompatible(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	e.editRelease = migrating(release.Migration{Args: []string{"migrate"}, BackwardCompatible: false})
	_, err := e.run("upgrade", "1.6.0", 0, false, crashLoop(t, "data-service"))
	var ce *upgrade.ComponentError
	if !errors.As(err, &ce) || ce.Component != "data-service" || ce.RolledBack || !strings.Contains(err.Error(), "not backward compatible") || !strings.Contains(err.Error(), "way out is forward") {
		t.Fatalf("failure after a migration that is not backward compatible: %v", err)
	}
	if vs, _ := e.versions(); vs["data-service"] != "1.6.0" {
		t.Fatalf("data-service runs %s: it was returned across its migration", vs["data-service"])
	}
	if u := e.platform().Status.Upgrade; u == nil || u.FailedComponent != "data-service" || !strings.Contains(u.Message, "not backward compatible") {
		t.Fatalf("status.upgrade: %+v", u)
	}
	// Undoing the upgrade would return data-service across its migration: refused.
	if _, err := e.run("rollback", "", 0, false); err == nil || !strings.Contains(err.Error(), "not backward compatible") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("rollback across the migration: %v, want a refusal naming --force", err)
	}
	if vs, _ := e.versions(); vs["data-service"] != "1.6.0" {
		t.Fatalf("a refused rollback moved data-service to %s", vs["data-service"])
	}
}

// TestRollbackToASucceededRevisionIsDirect: a rollback to a revision that ran
// Succeeded applies it plane by plane in reverse plane order (the services before the
// backing services they use), with no canary, and ends with every workload back, the
// revision recorded, kstatus Current and no target snapshot left.
func TestRollbackToASucceededRevisionIsDirect(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0")
	if _, err := e.run("upgrade", "1.6.0", 0, false); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	e.mu.Lock()
	e.events, e.during, e.direct = nil, nil, true
	e.mu.Unlock()
	if _, err := e.run("rollback", "", 0, false); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	vs, canaries := e.versions()
	for name, v := range vs {
		if v != "1.5.0" {
			t.Errorf("%s runs %s after the rollback, want 1.5.0", name, v)
		}
	}
	if canaries != 0 {
		t.Errorf("%d canaries after a direct rollback", canaries)
	}
	var planes []string
	for _, ev := range e.events {
		if ev.Type == apply.EventUpgradeStep && ev.Object != "" {
			t.Errorf("a direct rollback ran a component step: %s: %s", ev.Object, ev.Message)
		}
		if ev.Type == apply.EventPlaneStarted {
			planes = append(planes, string(ev.Plane))
		}
	}
	// Tenancy first (everything lives in it), then the planes in reverse order.
	var want []string
	for _, pl := range slices.Backward(v1alpha1.Planes()) {
		if pl != v1alpha1.PlaneTenancy && slices.Contains(planes, string(pl)) {
			want = append(want, string(pl))
		}
	}
	if len(planes) < 3 || planes[0] != string(v1alpha1.PlaneTenancy) || !slices.Equal(planes[1:], want) {
		t.Errorf("planes applied in order %v, want tenancy then %v", planes, want)
	}
	p := e.platform()
	if last := lastRevision(p); last.Action != "rollback" || last.Result != v1alpha1.RevisionSucceeded || last.Version != "1.5.0" || p.Status.Upgrade != nil {
		t.Fatalf("after the rollback: last revision %+v, upgrade %+v", last, p.Status.Upgrade)
	}
	if res := e.kstatus(); res.Status != kstatus.CurrentStatus {
		t.Errorf("kstatus after the rollback: %s (%s), want Current", res.Status, res.Message)
	}
	if _, err := e.clients.Kube.CoreV1().Secrets(e.p.Namespace).Get(t.Context(), apply.TargetSecretName(e.p.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the target snapshot after the rollback: %v, want gone", err)
	}
}

// TestUndoFailedUpgradeFromTheClusterAlone: an upgrade to a version only a
// --releases directory knew (1.6.1) fails at data-service; rollback, with the
// shipped catalog alone, undoes it from the target the upgrade stored as it started,
// returning what it moved newest first.
func TestUndoFailedUpgradeFromTheClusterAlone(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	catalog := ontotest.Catalog(t)
	if _, err := catalog.Get("1.6.1"); err == nil {
		t.Fatal("the shipped catalog knows 1.6.1: the test needs a version only a --releases directory has")
	}
	e.editRelease = func(r *release.Release) { r.Version = "1.6.1" }
	_, err := e.runTo("1.6.0", "1.6.1", crashLoop(t, "data-service"))
	var ce *upgrade.ComponentError
	if !errors.As(err, &ce) || ce.Component != "data-service" {
		t.Fatalf("upgrade to 1.6.1 with a crash-looping data-service: %v, want a ComponentError for data-service", err)
	}
	up := e.platform().Status.Upgrade
	if up == nil || up.Target == "" || len(up.Done) < 2 {
		t.Fatalf("status.upgrade after the failure: %+v, want a stored target and at least two moved components", up)
	}
	if res := e.kstatus(); res.Status != kstatus.FailedStatus {
		t.Errorf("kstatus after the failed upgrade: %s (%s), want Failed", res.Status, res.Message)
	}
	moved := slices.Clone(up.Done)

	e.direct = true // the CLI's default: the undo is never direct
	res, err := e.run("rollback", "", 0, false)
	if err != nil {
		t.Fatalf("rollback of the failed upgrade without its release: %v", err)
	}
	// What it moved, newest first. data-service, where it stopped, is applied again
	// but not counted: its failure returned it already (the done line said "10
	// components moved" for 9).
	want := slices.Clone(moved)
	slices.Reverse(want)
	if !slices.Equal(res.Steps, want) {
		t.Errorf("the undo counts %v as moved, want newest first %v", res.Steps, want)
	}
	vs, _ := e.versions()
	for name, v := range vs {
		if v != "1.5.0" {
			t.Errorf("%s runs %s after the undo, want 1.5.0", name, v)
		}
	}
	if p := e.platform(); p.Status.Upgrade != nil || p.Status.Version != "1.5.0" {
		t.Fatalf("after the undo: upgrade %+v, version %s", p.Status.Upgrade, p.Status.Version)
	}
	if res := e.kstatus(); res.Status != kstatus.CurrentStatus {
		t.Errorf("kstatus after the undo: %s (%s), want Current", res.Status, res.Message)
	}
}
