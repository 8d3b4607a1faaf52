/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// chaosPatch puts a simulated failure into the pod template of a Deployment. kwok
// makes a pod Ready at once and starts a failure a few seconds later; minReadySeconds
// keeps the rollout from counting it available in between, as a real crashing
// container would never have been.
func chaosPatch(t *testing.T, deployment string, mode testcluster.ChaosMode) render.Patch {
	t.Helper()
	ps, err := render.LoadPatches("chaos", fmt.Appendf(nil, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  minReadySeconds: 60
  template:
    metadata:
      labels:
        %s: %s
`, deployment, testcluster.ChaosLabel, mode))
	if err != nil || len(ps) != 1 {
		t.Fatalf("chaos patch: %v", err)
	}
	return ps[0]
}

// applyCtx is apply with a caller's context and observer.
func (e *env) applyCtx(ctx context.Context, opts apply.Options, observe func(apply.Event)) error {
	e.t.Helper()
	a := &apply.Applier{Clients: e.clients, Now: time.Now, Observer: observe}
	_, err := a.Apply(ctx, e.desired(), opts)
	return err
}

// TestApplyConvergesAfterPartialRun: a run that wrote its objects but did
// not prune (--prune=false, Ctrl-C after a plane, a crash) leaves deletes pending while
// the parent is unchanged; the next run must apply them, not fail on the parent.
func TestApplyConvergesAfterPartialRun(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()

	// Renames every hashed ConfigMap: creates and deletes in every plane.
	e.platform.Spec.Observability.Logging.Level = "DEBUG"
	noPrune := testOptions()
	noPrune.Prune = false
	if _, err := e.apply(noPrune); err != nil {
		t.Fatalf("apply --prune=false: %v", err)
	}
	p := e.plan(e.desired())
	if len(changesOf(p, plan.ActionDelete)) == 0 || p.Plane(plan.PlatformPlane).Changes[1].Action != plan.ActionUnchanged {
		t.Fatalf("after --prune=false: %+v; want pending deletes and an unchanged parent", p.Summary)
	}
	for range 2 { // the re-run, and once more: both converge
		if _, err := e.apply(testOptions()); err != nil {
			t.Fatalf("re-run after --prune=false: %v", err)
		}
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after the re-run: %+v", p.Summary)
	}

	// Ctrl-C once the first plane is healthy, during a change of every plane.
	e.platform.Spec.Observability.Logging.Level = "WARN"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := e.applyCtx(ctx, testOptions(), func(ev apply.Event) {
		if ev.Type == apply.EventPlaneReady {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted apply = %v, want context canceled", err)
	}
	if p := e.plan(e.desired()); !p.HasChanges() {
		t.Fatal("the interrupted apply finished everything; the test interrupts nothing")
	}
	// The status says the run was stopped, not that the platform failed, and the
	// history keeps the interrupted run.
	st := e.getPlatform().Status
	progressing := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionProgressing)
	if progressing == nil || progressing.Status != metav1.ConditionFalse || progressing.Reason != v1alpha1.ReasonInterrupted {
		t.Errorf("Progressing after Ctrl-C = %+v, want False/Interrupted", progressing)
	}
	if last := st.History[len(st.History)-1]; last.Result != v1alpha1.RevisionInterrupted {
		t.Errorf("last revision after Ctrl-C = %+v, want Interrupted", last)
	}
	if _, err := e.apply(testOptions()); err != nil {
		t.Fatalf("re-run after Ctrl-C: %v", err)
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after the re-run: %+v", p.Summary)
	}
	if st := e.getPlatform().Status; st.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("phase after the re-run = %s, want Running", st.Phase)
	}
}

// TestRetriedFailedApplyStillFails: apply means "this spec, healthy": a
// re-run with nothing to write still waits for health, fails when the platform is not
// healthy, and records that, so a CI retry cannot turn a failed deploy green.
func TestRetriedFailedApplyStillFails(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.patches = []render.Patch{chaosPatch(t, "gateway", testcluster.ChaosNeverReady)}
	opts := testOptions()
	opts.PlaneTimeout = 8 * time.Second
	for run := range 2 {
		_, err := e.apply(opts)
		var ae *apply.ApplyError
		if !errors.As(err, &ae) || ae.Plane != "gateway" || !strings.Contains(ae.Object, "gateway") {
			t.Fatalf("run %d: apply = %v, want the gateway plane to fail", run+1, err)
		}
		st := e.getPlatform().Status
		if st.Phase != v1alpha1.PhaseError || meta(st, v1alpha1.ConditionReady) != metav1.ConditionFalse {
			t.Fatalf("run %d: phase %s, Ready %s; want Error and False", run+1, st.Phase, meta(st, v1alpha1.ConditionReady))
		}
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("the second run had changes to write (%+v): it did not test the no-change path", p.Summary)
	}

	// Fixed: the same path turns green.
	e.patches = nil
	e.mustConverge()
	if st := e.getPlatform().Status; st.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("phase after the fix = %s, want Running", st.Phase)
	}
}

func meta(st v1alpha1.OntoPlatformStatus, typ string) metav1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return metav1.ConditionUnknown
}

// TestApplyCrashLoopFailsEarly: a crash-looping new pod is shown as it
// appears, and the plane fails once it has restarted --crashloop-restarts times, not
// at the end of the plane timeout.
func TestApplyCrashLoopFailsEarly(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.patches = []render.Patch{chaosPatch(t, "gateway", testcluster.ChaosCrashLoop)}
	opts := testOptions()
	opts.PlaneTimeout = 3 * time.Minute
	opts.CrashLoopRestarts = 2
	var mu sync.Mutex
	var shown []apply.Event
	start := time.Now()
	err := e.applyCtx(t.Context(), opts, func(ev apply.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Type == apply.EventWaiting && strings.Contains(ev.Message, "CrashLoopBackOff") {
			shown = append(shown, ev)
		}
	})
	took := time.Since(start)
	var ae *apply.ApplyError
	if !errors.As(err, &ae) || ae.Plane != "gateway" || !strings.Contains(err.Error(), "crash-looping") || !strings.Contains(err.Error(), "CrashLoopBackOff") {
		t.Fatalf("apply = %v, want the gateway plane to fail on the crash loop", err)
	}
	if took >= opts.PlaneTimeout {
		t.Fatalf("apply failed after %s: it waited out the plane timeout (%s)", took, opts.PlaneTimeout)
	}
	mu.Lock()
	if len(shown) == 0 || !strings.Contains(shown[0].Object, "gateway") || !strings.Contains(shown[0].Message, "restarts") {
		t.Fatalf("progress showed no CrashLoopBackOff of a gateway pod before the failure: %+v", shown)
	}
	mu.Unlock()

	// The fix: the old pods still crash-loop while it rolls out, and must not be
	// blamed on it.
	e.patches = nil
	e.mustConverge()
}

// TestApplyRunsUnderTheLock: even with nothing to write, a run takes the
// lock first: while another run holds it, it fails at once and writes no status.
func TestApplyRunsUnderTheLock(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	before := e.getPlatform()
	leases := e.cluster.Kube.CoordinationV1().Leases(e.platform.Namespace)
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: apply.LockName(e.platform.Name), Namespace: e.platform.Namespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ci-job-42"), LeaseDurationSeconds: ptr.To[int32](60), RenewTime: &now},
	}
	if _, err := leases.Create(t.Context(), lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.writes.Store(0)
	_, err := e.apply(testOptions())
	var locked *apply.LockedError
	if !errors.As(err, &locked) || locked.Holder != "ci-job-42" {
		t.Fatalf("no-change apply under a held lock = %v, want a LockedError naming ci-job-42", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a refused run sent %d writes, want 0", n)
	}
	if after := e.getPlatform(); after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("the OntoPlatform changed (resourceVersion %s → %s) under another run's lock", before.ResourceVersion, after.ResourceVersion)
	}
}

// TestApplyLostLockNamesTheHolder: a run whose lease is taken over stops
// with "lost the lock to HOLDER", not "context canceled".
func TestApplyLostLockNamesTheHolder(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	e.patches = []render.Patch{chaosPatch(t, "gateway", testcluster.ChaosNeverReady)}
	opts := testOptions()
	opts.LockTTL = 3 * time.Second
	opts.PlaneTimeout = time.Minute
	leases := e.cluster.Kube.CoordinationV1().Leases(e.platform.Namespace)
	var once sync.Once
	err := e.applyCtx(t.Context(), opts, func(ev apply.Event) {
		if ev.Type != apply.EventPlaneStarted || ev.Plane != "gateway" {
			return
		}
		once.Do(func() {
			// Another run takes the lease over, as after this run stalled past its TTL.
			// The holder renews meanwhile: a conflict is retried on a fresh read.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				l, err := leases.Get(context.Background(), apply.LockName(e.platform.Name), metav1.GetOptions{})
				if err != nil {
					return err
				}
				l.Spec.HolderIdentity = ptr.To("kubectl-onto@other-host/7")
				_, err = leases.Update(context.Background(), l, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Errorf("take over lease: %v", err)
			}
		})
	})
	var lost *apply.LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "lost the lock to kubectl-onto@other-host/7") {
		t.Fatalf("apply after losing its lease = %v, want a LostError naming the new holder", err)
	}
	if strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("error %q says context canceled", err)
	}
}

// TestApplyRefusesDowngrade: the installed version only moves along the
// release's upgrade path unless forced.
func TestApplyRefusesDowngrade(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	cat, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	rel := func(v string) *release.Release {
		r, err := cat.Get(v)
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	e.platform.Spec.Version = "1.6.0"
	opts := testOptions()
	opts.Release = rel("1.6.0")
	if _, err := e.apply(opts); err != nil {
		t.Fatal(err)
	}
	e.platform.Spec.Version = "1.5.0"
	opts.Release = rel("1.5.0")
	e.writes.Store(0)
	_, err = e.apply(opts)
	var ve *apply.VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "1.6.0") || !strings.Contains(err.Error(), "1.5.0") || !strings.Contains(err.Error(), "--force-version") {
		t.Fatalf("apply of 1.5.0 over 1.6.0 = %v, want a VersionError naming both and --force-version", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a refused downgrade sent %d writes", n)
	}
	if st := e.getPlatform().Status; st.Version != "1.6.0" {
		t.Fatalf("installed version after a refused downgrade = %s", st.Version)
	}
	opts.ForceVersion = true
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply --force-version: %v", err)
	}
	if st := e.getPlatform().Status; st.Version != "1.5.0" {
		t.Fatalf("installed version after a forced downgrade = %s", st.Version)
	}
}

// TestSavedPlanWithDeletes: a saved plan that prunes applies whole; its
// parent's second write carries no stale resourceVersion.
func TestSavedPlanWithDeletes(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.platform.Spec.Gateway.Ingress = &v1alpha1.IngressSpec{Enabled: true, Host: "onto.example.com"}
	e.mustApply()
	e.platform.Spec.Gateway.Ingress = nil
	saved := e.plan(e.desired())
	if len(changesOf(saved, plan.ActionDelete)) == 0 {
		t.Fatal("the saved plan deletes nothing")
	}
	opts := testOptions()
	opts.Saved = saved
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply of a saved plan with deletes: %v", err)
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after the saved plan: %+v", p.Summary)
	}
}

// TestSecondPlatformInANamespace: a second platform in a namespace is
// refused before any dry-run, naming the platform that owns it.
func TestSecondPlatformInANamespace(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	other := e.platform.DeepCopy()
	other.Name = "second"
	d := ontotest.Desired(t, other)
	_, err := (&plan.Planner{Clients: e.clients}).Plan(t.Context(), d)
	var fe *plan.ForeignNamespaceError
	owner := e.platform.Namespace + "/" + e.platform.Name
	if !errors.As(err, &fe) || fe.Owner != owner || !strings.Contains(err.Error(), "platform "+owner) {
		t.Fatalf("plan of a second platform = %v, want a ForeignNamespaceError naming %s", err, owner)
	}
	if strings.Contains(err.Error(), "immutable") || strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("error %q", err)
	}
	e.writes.Store(0)
	_, err = (&apply.Applier{Clients: e.clients, Now: time.Now}).Apply(t.Context(), d, testOptions())
	if !errors.As(err, &fe) {
		t.Fatalf("apply of a second platform = %v, want a ForeignNamespaceError", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a refused second platform sent %d writes", n)
	}
}

// TestUninstallReleasesKeptNamespace: a namespace kept by uninstall leaves
// the inventory, so the next platform there installs without a conflict.
func TestUninstallReleasesKeptNamespace(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	a := &apply.Applier{Clients: e.clients, Now: time.Now}
	if _, err := a.Uninstall(t.Context(), e.platform.Namespace, e.platform.Name, apply.UninstallOptions{Holder: "test", LockTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	ns, err := e.cluster.Kube.CoreV1().Namespaces().Get(t.Context(), e.platform.Namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kept namespace: %v", err)
	}
	if id, ok := ns.Labels[inventory.PartOfLabel]; ok {
		t.Fatalf("kept namespace still carries %s=%s", inventory.PartOfLabel, id)
	}
	e.platform.Name = "next"
	e.mustConverge()
}

// TestApplyWithoutWaitRecordsProgressing: --wait=false records a rollout in progress,
// not a degraded platform.
func TestApplyWithoutWaitRecordsProgressing(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.patches = []render.Patch{chaosPatch(t, "gateway", testcluster.ChaosNeverReady)}
	opts := testOptions()
	opts.Wait = false
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply --wait=false: %v", err)
	}
	st := e.getPlatform().Status
	if st.Phase == v1alpha1.PhaseDegraded || st.Phase == v1alpha1.PhaseError || meta(st, v1alpha1.ConditionProgressing) != metav1.ConditionTrue {
		t.Fatalf("after --wait=false: phase %s, Progressing %s; want a rollout in progress", st.Phase, meta(st, v1alpha1.ConditionProgressing))
	}
	// Healthy once the cause is gone; the run that finds it so, with nothing to
	// write, records the revision as installed, with its snapshot.
	e.patches = nil
	if _, err := e.apply(opts); err != nil {
		t.Fatal(err)
	}
	e.mustApply()
	st = e.getPlatform().Status
	last := st.History[len(st.History)-1]
	if st.Phase != v1alpha1.PhaseRunning || last.Result != v1alpha1.RevisionSucceeded || last.Snapshot == "" || st.ObservedGeneration == 0 {
		t.Fatalf("after the healthy run: phase %s, last revision %+v, observedGeneration %d", st.Phase, last, st.ObservedGeneration)
	}
}

// TestApplyFailsFastWhenPodsCannotBeCreated: pods that are never created (here a
// ResourceQuota the platform does not own) stop the plane at once with the quota's
// message, instead of an empty reason at the end of the plane timeout.
func TestApplyFailsFastWhenPodsCannotBeCreated(t *testing.T) {
	t.Parallel()
	// Two infrastructure components: the quota admits one pod and refuses the other's.
	e := newSmallEnv(t, v1alpha1.ComponentRedis)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "tight", Namespace: e.platform.Namespace},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
	}
	if _, err := e.cluster.Kube.CoreV1().ResourceQuotas(e.platform.Namespace).Create(t.Context(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.PlaneTimeout = 3 * time.Minute
	start := time.Now()
	_, err := e.apply(opts)
	took := time.Since(start)
	var ae *apply.ApplyError
	if !errors.As(err, &ae) || ae.Plane != "infrastructure" || !strings.Contains(err.Error(), "quota") || !strings.Contains(err.Error(), "cannot be created") {
		t.Fatalf("apply = %v, want the infrastructure plane to fail naming the quota", err)
	}
	if took >= opts.PlaneTimeout {
		t.Fatalf("apply failed after %s: it waited out the plane timeout", took)
	}
}

// TestApplyAfterKill9 (a dead run's lease): a run killed with -9 leaves its
// lease; the next run on the same host sees that process is gone and takes the lock at
// once, instead of waiting out the lease, and converges.
func TestApplyAfterKill9(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	self := apply.CurrentProcess()
	if self.Start == "" {
		mustrun.Skipf(t, "no /proc: a dead holder cannot be recognised here")
	}
	// A process that held the lock and was killed: a child, killed and reaped.
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	dead := apply.Process{Host: self.Host, PID: child.Process.Pid, Start: apply.ProcessStart(child.Process.Pid), Boot: self.Boot, PIDNS: self.PIDNS}
	_ = child.Process.Kill()
	_ = child.Wait()
	held := &apply.Lock{Kube: e.cluster.Kube, Namespace: e.platform.Namespace, Name: apply.LockName(e.platform.Name),
		Holder: fmt.Sprintf("kubectl-onto@%s/%d", dead.Host, dead.PID), TTL: 10 * time.Minute, Now: time.Now, Process: dead}
	if err := held.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}

	e.platform.Spec.Gateway.Replicas = ptr.To[int32](2)
	var mu sync.Mutex
	var tookOver []string
	start := time.Now()
	a := &apply.Applier{Clients: e.clients, Now: time.Now, Process: self, Observer: func(ev apply.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Type == apply.EventLockTakenOver {
			tookOver = append(tookOver, ev.Message)
		}
	}}
	if _, err := a.Apply(t.Context(), e.desired(), testOptions()); err != nil {
		t.Fatalf("apply after the holder was killed: %v", err)
	}
	if took := time.Since(start); took > 5*time.Minute {
		t.Fatalf("apply took %s: it waited for the 10-minute lease", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tookOver) != 1 || !strings.Contains(tookOver[0], held.Holder) {
		t.Fatalf("LockTakenOver events %q, want one naming %s", tookOver, held.Holder)
	}
	if p := e.plan(e.desired()); p.HasChanges() {
		t.Fatalf("plan after the run: %+v", p.Summary)
	}
}

// TestApplyLockWait: --lock-wait waits for a live lease to expire, then runs.
func TestApplyLockWait(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.mustApply()
	other := &apply.Lock{Kube: e.cluster.Kube, Namespace: e.platform.Namespace, Name: apply.LockName(e.platform.Name),
		Holder: "ci-job-7", TTL: 4 * time.Second, Now: time.Now}
	if err := other.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	_, err := e.apply(opts)
	var locked *apply.LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "kubectl onto unlock "+e.platform.Name+" -n "+e.platform.Namespace) {
		t.Fatalf("apply without --lock-wait = %v, want a LockedError naming the unlock command", err)
	}
	opts.LockWait = time.Minute
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply --lock-wait=1m: %v", err)
	}
}

// TestStatefulSetVolumeGrowth (immutable fields): a larger volume is planned
// as a replace (claims expanded, StatefulSet recreated around its running pods), not a
// failed plan; a smaller one, a new storage class, or a class that cannot expand are
// refused before anything is written, naming the field.
func TestStatefulSetVolumeGrowth(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	class := testcluster.UniqueName(t, "expandable")
	sc := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: class},
		Provisioner:          "testcluster.onto.dev/hostpath",
		AllowVolumeExpansion: ptr.To(true),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := e.cluster.Kube.StorageV1().StorageClasses().Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cluster.Kube.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	e.platform.Spec.Global.StorageClass = class
	pg := &e.platform.Spec.Infrastructure.Postgres
	pg.Storage = ptr.To(resource.MustParse("10Gi"))
	e.mustApply()
	ns := e.platform.Namespace
	before, err := e.cluster.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), "postgres", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := e.cluster.Kube.CoreV1().Pods(ns).Get(t.Context(), "postgres-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	pg.Storage = ptr.To(resource.MustParse("20Gi"))
	p := e.plan(e.desired())
	var replace *plan.Change
	for _, c := range changesOf(p, plan.ActionReplace) {
		if c.Object.Kind == "StatefulSet" && c.Object.Name == "postgres" {
			replace = &c
		}
	}
	if replace == nil || len(replace.Claims) != 1 || replace.Claims[0].To != "20Gi" {
		t.Fatalf("plan of a larger postgres volume: %+v; want a replace of StatefulSet postgres expanding its claim to 20Gi", p.Summary)
	}
	e.mustConverge()
	after, err := e.cluster.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), "postgres", metav1.GetOptions{})
	if err != nil || after.UID == before.UID {
		t.Fatalf("StatefulSet postgres after the replace: %v (same UID %v)", err, after.UID == before.UID)
	}
	claim, err := e.cluster.Kube.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), replace.Claims[0].Name, metav1.GetOptions{})
	if err != nil || claim.Spec.Resources.Requests.Storage().String() != "20Gi" {
		t.Fatalf("claim %s after the replace: %v, %v; want 20Gi", replace.Claims[0].Name, claim.Spec.Resources.Requests.Storage(), err)
	}
	kept, err := e.cluster.Kube.CoreV1().Pods(ns).Get(t.Context(), "postgres-0", metav1.GetOptions{})
	if err != nil || kept.UID != pod.UID {
		t.Fatalf("pod postgres-0 after the replace: %v; want the same pod, kept running", err)
	}

	for _, tc := range []struct {
		name  string
		edit  func()
		field string
	}{
		{name: "smaller", edit: func() { pg.Storage = ptr.To(resource.MustParse("5Gi")) }, field: "storage"},
		{name: "another class", edit: func() { e.platform.Spec.Global.StorageClass = "standard" }, field: "storageClassName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := e.platform.DeepCopy()
			defer func() { e.platform = saved; pg = &saved.Spec.Infrastructure.Postgres }()
			tc.edit()
			_, err := (&plan.Planner{Clients: e.clients}).Plan(t.Context(), e.desired())
			var ie *plan.ImmutableError
			// The class is global: the API server's CEL rule on the OntoPlatform or the
			// check of whichever StatefulSet is planned first refuses it, both naming
			// the field.
			if tc.field == "storageClassName" && err != nil && strings.Contains(err.Error(), "spec.global.storageClass") && strings.Contains(err.Error(), "storageClass cannot change") {
				return
			}
			if !errors.As(err, &ie) || !strings.Contains(ie.Field, tc.field) || ie.Object.Kind != "StatefulSet" {
				t.Fatalf("plan = %v, want an ImmutableError on %s of a StatefulSet", err, tc.field)
			}
		})
	}
}

// TestStatefulSetVolumeGrowthNeedsExpansion: a class without allowVolumeExpansion
// refuses the growth at plan time.
func TestStatefulSetVolumeGrowthNeedsExpansion(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.platform.Spec.Infrastructure.Postgres.Storage = ptr.To(resource.MustParse("10Gi"))
	e.mustApply()
	e.platform.Spec.Infrastructure.Postgres.Storage = ptr.To(resource.MustParse("20Gi"))
	_, err := (&plan.Planner{Clients: e.clients}).Plan(t.Context(), e.desired())
	var ie *plan.ImmutableError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "does not allow volume expansion") {
		t.Fatalf("plan = %v, want an ImmutableError about volume expansion", err)
	}
}

// TestAutoscalingTurnedOff: after the autoscaler scaled a workload, turning
// autoscaling off plans the HPA's delete and takes spec.replicas back from it, without
// a conflict to force.
func TestAutoscalingTurnedOff(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	gw := &e.platform.Spec.Gateway
	gw.Replicas = nil
	gw.Autoscaling = &v1alpha1.AutoscalingSpec{Enabled: true, MinReplicas: 2, MaxReplicas: 5, TargetCPUUtilization: 80,
		ScaleUpStabilizationSeconds: ptr.To[int32](60), ScaleDownStabilizationSeconds: ptr.To[int32](300)}
	e.mustApply()
	// The autoscaler scales the gateway, as the HPA controller does.
	scale := []byte(`{"spec":{"replicas":4}}`)
	if _, err := e.cluster.Kube.AppsV1().Deployments(e.platform.Namespace).Patch(t.Context(), "gateway", types.MergePatchType, scale, metav1.PatchOptions{FieldManager: "horizontal-pod-autoscaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	gw.Autoscaling = nil
	gw.Replicas = ptr.To[int32](3)
	p := e.plan(e.desired())
	if p.Summary.Conflicts != 0 {
		t.Fatalf("turning autoscaling off: %d conflicts, want none", p.Summary.Conflicts)
	}
	e.mustConverge()
	d, err := e.cluster.Kube.AppsV1().Deployments(e.platform.Namespace).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 {
		t.Fatalf("gateway after autoscaling was turned off: %v, %v; want 3 replicas", d.Spec.Replicas, err)
	}
}

// TestAdoptUnownedObject (adoption): an existing object with a rendered name
// that belongs to no platform is a conflict, refused with --adopt as the way out, and
// adopted (labelled, then updated and prunable) with it.
func TestAdoptUnownedObject(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	ns := e.platform.Namespace
	sa, err := e.cluster.Kube.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gateway", Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := e.plan(e.desired())
	var found bool
	for _, c := range changesOf(p, plan.ActionUpdate) {
		if c.Object.Kind == "ServiceAccount" && c.Object.Name == "gateway" && len(c.Conflicts) == 1 && c.Conflicts[0].Kind == plan.ConflictUnowned {
			found = true
		}
	}
	if !found {
		t.Fatalf("plan shows no unowned conflict on ServiceAccount gateway: %+v", p.Summary)
	}
	e.writes.Store(0)
	_, err = e.apply(testOptions())
	var ce *apply.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--adopt") || strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("apply = %v, want a ConflictError offering --adopt (not --force-conflicts)", err)
	}
	if n := e.writes.Load(); n != 0 {
		t.Fatalf("a refused adoption wrote %d requests", n)
	}
	// A plan saved with --adopt does not adopt when applied without it.
	saved, err := (&plan.Planner{Clients: e.clients, Adopt: true}).Plan(t.Context(), e.desired())
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Saved = saved
	if _, err := e.apply(opts); !errors.As(err, &ce) {
		t.Fatalf("apply --plan of a plan made with --adopt, without --adopt = %v, want a ConflictError", err)
	}
	opts = testOptions()
	opts.Adopt = true
	if _, err := e.apply(opts); err != nil {
		t.Fatalf("apply --adopt: %v", err)
	}
	got, err := e.cluster.Kube.CoreV1().ServiceAccounts(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil || got.UID != sa.UID || got.Labels[inventory.PartOfLabel] != inventory.ID(ns, e.platform.Name) {
		t.Fatalf("ServiceAccount gateway after --adopt: %v, labels %v", err, got.Labels)
	}
	if p := e.plan(e.desired()); p.HasChanges() || p.Summary.Conflicts != 0 {
		t.Fatalf("plan after adoption: %+v", p.Summary)
	}
}

// TestSpecPatchesTravelWithThePlatform: patches in spec.patches are applied, stored in
// the OntoPlatform and in the revision's snapshot, so a run from the same file on
// another machine renders the same objects.
func TestSpecPatchesTravelWithThePlatform(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	e.platform.Spec.Patches = []v1alpha1.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\n  annotations:\n    example.com/owner: platform-team\n"}}
	e.mustConverge()
	d, err := e.cluster.Kube.AppsV1().Deployments(e.platform.Namespace).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil || d.Annotations["example.com/owner"] != "platform-team" {
		t.Fatalf("gateway after apply with spec.patches: %v, annotations %v", err, d.Annotations)
	}
	snap, err := (&apply.Applier{Clients: e.clients}).LoadRevision(t.Context(), e.platform.Namespace, e.platform.Name, 1)
	if err != nil || len(snap.Spec.Patches) != 1 {
		t.Fatalf("revision 1 snapshot: %+v, %v; want the patch in its spec", snap, err)
	}
}

// TestGeneratedSecretGetsNewKeys (a release that adds a key to a generated
// Secret): the missing key is added, masked in the plan, and no existing value changes.
func TestGeneratedSecretGetsNewKeys(t *testing.T) {
	t.Parallel()
	// minio's generated Secret has several keys, one of which the test drops.
	e := newSmallEnv(t, v1alpha1.ComponentMinio)
	e.mustApply()
	secrets := e.cluster.Kube.CoreV1().Secrets(e.platform.Namespace)
	before, err := secrets.Get(t.Context(), "minio", metav1.GetOptions{})
	if err != nil || len(before.Data) < 2 {
		t.Fatalf("generated Secret minio: %v, %d keys; want at least 2", err, len(before.Data))
	}
	// As if an older release had made it without one of today's keys.
	var dropped string
	for k := range before.Data {
		dropped = k
		break
	}
	patch := fmt.Appendf(nil, `[{"op":"remove","path":"/data/%s"}]`, dropped)
	if _, err := secrets.Patch(t.Context(), "minio", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	p := e.plan(e.desired())
	var change *plan.Change
	for _, c := range changesOf(p, plan.ActionUpdate) {
		if c.Object.Kind == "Secret" && c.Object.Name == "minio" {
			change = &c
		}
	}
	if change == nil || len(change.Fields) != 1 || change.Fields[0].Path != "data."+dropped || change.Fields[0].New != plan.Masked {
		t.Fatalf("plan of a Secret missing key %s: %+v; want one update adding it, masked", dropped, change)
	}
	e.mustConverge()
	after, err := secrets.Get(t.Context(), "minio", metav1.GetOptions{})
	if err != nil || len(after.Data[dropped]) < 16 {
		t.Fatalf("Secret minio after apply: %v; want key %s generated", err, dropped)
	}
	for k, v := range before.Data {
		if k != dropped && string(after.Data[k]) != string(v) {
			t.Fatalf("the value of key %s changed", k)
		}
	}
}

// TestApplyFailsFastWhenPodSecurityForbidsPods: a Deployment whose pods PodSecurity
// admission forbids (restricted: no privilege escalation) reports ReplicaFailure; the plane fails at once with the
// admission's message.
func TestApplyFailsFastWhenPodSecurityForbidsPods(t *testing.T) {
	t.Parallel()
	e := newSmallEnv(t)
	ps, err := render.LoadPatches("privileged", []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
spec:
  template:
    spec:
      containers:
      - name: gateway
        securityContext:
          allowPrivilegeEscalation: true
`))
	if err != nil {
		t.Fatal(err)
	}
	e.patches = ps
	opts := testOptions()
	opts.PlaneTimeout = 3 * time.Minute
	start := time.Now()
	_, err = e.apply(opts)
	took := time.Since(start)
	var ae *apply.ApplyError
	if !errors.As(err, &ae) || ae.Plane != "gateway" || !strings.Contains(err.Error(), "cannot be created") || !strings.Contains(err.Error(), "PodSecurity") {
		t.Fatalf("apply = %v, want the gateway plane to fail naming PodSecurity", err)
	}
	if took >= opts.PlaneTimeout {
		t.Fatalf("apply failed after %s: it waited out the plane timeout", took)
	}
	// The fix: the old ReplicaSet's failure is still on the Deployment while the new
	// one rolls out, and must not fail it.
	e.patches = nil
	e.mustConverge()
}
