/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package controller is `kubectl onto watch`: a controller-runtime reconciler that
// keeps every watched OntoPlatform at its declared state. It writes through the same
// code and field manager as the CLI (pkg/apply, pkg/upgrade), under the same
// per-platform lock lease, so a CLI run and the reconciler never write at once.
//
// What it does not do: write the CRD or an OntoPlatform's spec (users and GitOps own
// them; only the inventory annotations and the status are written), retry a failed
// upgrade by itself (a spec change or the CLI resumes it), or wait inside a
// reconcile (a plane still rolling out ends the pass; its workloads' events bring the
// platform back).
package controller

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// DriftMode says what the reconciler does about drift.
type DriftMode string

// Drift modes.
const (
	// DriftRepair re-applies what this tool applies, taking its fields back.
	DriftRepair DriftMode = "repair"
	// DriftReport records drift (Event, audit log, status) and writes nothing.
	DriftReport DriftMode = "report"
)

// Requeue intervals.
const (
	// healthyRequeue is the periodic pass over a healthy platform, jittered ±10% so
	// many platforms do not come due together.
	healthyRequeue = 5 * time.Minute
	// rollingRequeue is the pass after a plane still rolling out, in case no event of
	// its workloads comes first.
	rollingRequeue = 15 * time.Second
)

// Reconciler reconciles OntoPlatforms.
type Reconciler struct {
	// Client reads OntoPlatforms from the manager's cache and writes finalizers.
	Client client.Client
	// Clients plan and apply, as the CLI does.
	Clients *kube.Clients
	Catalog *release.Catalog
	// Recorder writes Events on the OntoPlatform.
	Recorder events.EventRecorder
	// optionalKinds are the served optional kinds (servedOptionalKinds) the
	// controller watches besides ownedKinds.
	optionalKinds []client.Object
	// Audit receives one JSON line per change the reconciler makes; nil discards.
	Audit *AuditLog
	Drift DriftMode
	// Holder names the reconciler in the lock lease (watch/<host>/<pid>).
	Holder string
	// LockTTL is the lease's lifetime without renewal.
	LockTTL time.Duration
	Log     *slog.Logger
	Now     func() time.Time
	// Metrics, nil when not exported.
	Metrics *Metrics
	// HealthyRequeue is the periodic pass over a healthy platform; 5 min when 0.
	HealthyRequeue time.Duration
	// Upgrade are the canary settings of the upgrades it runs; nil: the defaults.
	Upgrade *UpgradeSettings
	// Reactions to failing pods (reactions.go); nil does not react.
	Reactions *Reactions

	// APIReader reads around the cache (the platform under the lock).
	APIReader client.Reader
	// Live is where passes read the platform's objects and readiness (the manager's
	// cache); the API server when nil. The few objects a pass dry-runs are read from
	// the API server either way (plan.Planner.Live).
	Live plan.LiveSource

	fights        fights
	unchanged     unchanged
	rollingMu     sync.Mutex
	rollingPasses map[string]int
	renderedMu    sync.Mutex
	rendered      map[types.NamespacedName]rendered
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

// jitter spreads d by ±10%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}

// Reconcile brings one OntoPlatform to its declared state, one pass.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var p v1alpha1.OntoPlatform
	if err := r.Client.Get(ctx, req.NamespacedName, &p); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := r.log().With("platform", req.String())

	if !p.DeletionTimestamp.IsZero() {
		err := r.finalize(ctx, &p)
		var later *requeueAfter
		if errors.As(err, &later) {
			log.Info(later.why)
			return ctrl.Result{RequeueAfter: later.d}, nil
		}
		return ctrl.Result{}, err
	}
	if !controllerutil.ContainsFinalizer(&p, apply.Finalizer) {
		// Optimistic: another controller's finalizer written meanwhile is not lost.
		patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(&p, apply.Finalizer)
		if err := r.Client.Patch(ctx, &p, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	r.react(ctx, &p)
	if u := p.Status.Upgrade; u != nil {
		if u.Driver == v1alpha1.UpgradeDriverWatch && u.FailedComponent == "" && u.Action != "rollback" && u.To == p.Spec.Version {
			return r.upgrade(ctx, &p) // the watch's own, one component per pass
		}
		// Never retried by itself: a failed upgrade needs a person's decision
		// (resume, roll back), which the CLI or a spec change brings.
		log.Info("an upgrade is stopped; waiting for the CLI to resume or roll it back", "from", u.From, "to", u.To)
		return ctrl.Result{RequeueAfter: jitter(r.healthyRequeue())}, nil
	}
	if p.Status.Version != "" && p.Spec.Version != p.Status.Version {
		return r.upgrade(ctx, &p)
	}

	a := r.applier(&p, nil)
	opts := apply.DefaultOptions()
	opts.Mode, opts.Action = apply.ModeReconcile, "watch"
	opts.ForceConflicts = r.Drift != DriftReport
	opts.Holder, opts.LockTTL = r.Holder, r.lockTTL()
	opts.CrashLoopRestarts, opts.Generation = 0, p.Generation
	ref := req.String() + "/" + string(p.UID)

	// Rendered once per pass, from the cached platform: under the lock, the live one
	// is checked to be that very object (its resourceVersion) before anything is
	// written.
	d, rel, source, err := r.desired(ctx, &p)
	if err != nil {
		r.event(&p, "Warning", "RenderFailed", "Render", err.Error())
		return ctrl.Result{}, err
	}
	if r.Drift == DriftReport && source != "" {
		return r.report(ctx, &p, d)
	}
	idle, planned := r.idle(ctx, &p, ref, d, source)
	log.Debug("idle check", "idle", idle)
	if idle {
		r.Metrics.setReady(&p, true)
		return ctrl.Result{RequeueAfter: jitter(r.healthyRequeue())}, nil
	}
	lockCtx, release, err := a.Lock(ctx, p.Namespace, p.Name, opts)
	var locked *apply.LockedError
	if errors.As(err, &locked) {
		log.Info("a CLI run holds the lock; coming back after it", "holder", locked.Holder)
		r.event(&p, "Normal", v1alpha1.ReasonCLIRunInProgress, "Wait", fmt.Sprintf("%s holds the lock; reconciling after it", locked.Holder))
		r.markCLIRun(ctx, &p, locked)
		return ctrl.Result{RequeueAfter: max(time.Second, locked.Expires.Sub(r.now())+time.Second)}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	defer release()
	// Under the lock, the platform as it is now: the cache may not have seen what a
	// CLI run that just released the lock recorded (its revision, its generation).
	live, err := r.livePlatform(lockCtx, &p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if live.ResourceVersion != p.ResourceVersion {
		log.Debug("the cache lags the platform; again in 1 s", "cached", p.ResourceVersion, "live", live.ResourceVersion)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	opts.Release = &rel
	// The cache serves this pass's reads too: what it has not seen yet of an object's
	// change brings the object's event, and another pass, when it does. The idle
	// check's plan, when it made one, is the plan: its dry-runs are not made twice.
	opts.Live, opts.Planned = r.Live, planned
	desiredID := desiredID(source, &p)
	opts.Unchanged = r.unchanged.skip(ref, desiredID)
	if opts.Unchanged == nil {
		// No pass remembers these objects as applied (the first pass after a start,
		// or of a new spec): the plan lists each kind from the API server, with the
		// managedFields the cache strips, so an object this tool's fields already
		// match is known unchanged without a request. From the cache, each object
		// would cost a GET of its own (planned from the API, as the cache may lag).
		opts.Live = nil
	}
	fighting := r.fights.fighting(ref, r.now())
	if len(fighting) > 0 {
		// Left as the other manager has it; the rest is still kept.
		opts.Only = func(obj *unstructured.Unstructured) bool {
			_, fight := fighting[objectKey(obj.GetKind(), obj.GetName())]
			return !fight
		}
		opts.Planned = nil // made without leaving the fought objects out
		msg := fightMessage(fighting)
		opts.Degraded = &apply.DegradedReason{Reason: ReasonDriftFight, Message: msg}
		r.event(&p, "Warning", ReasonDriftFight, "Repair", msg)
	}
	applied := map[string]bool{}
	var appliedMu sync.Mutex
	a = r.applier(&p, func(object string) {
		appliedMu.Lock()
		applied[object] = true
		appliedMu.Unlock()
	})
	res, err := a.Apply(lockCtx, d, opts)
	if res != nil && opts.ForceConflicts {
		// Only what was written took fields back; a pass that stopped before an
		// object's plane did not.
		r.fights.record(ref, res.Plan, applied, r.now())
	}
	wrote := res != nil && res.Applied > 0
	if res != nil {
		// The objects left to another manager are not known to be as applied: once
		// the fight is over, the next pass must compare them again.
		r.unchanged.record(ref, desiredID, res.Plan, err != nil && !isNotReady(err), fighting)
	}
	log.Debug("pass", "generation", p.Generation, "observed", p.Status.ObservedGeneration, "source", source, "err", err)
	// Every write of an unchanged spec is a repair, whatever ended the pass: one that
	// stops at a plane not ready yet (the repaired Deployment rolling) repaired too.
	if wrote && source != "" {
		r.Metrics.driftRepaired(res.Applied)
	}
	var notReady *apply.PlaneNotReadyError
	switch {
	case errors.As(err, &notReady):
		r.Metrics.setReady(&p, false)
		return ctrl.Result{RequeueAfter: r.rolling(ref, wrote)}, nil
	case err != nil:
		r.Metrics.setReady(&p, false)
		r.event(&p, "Warning", "ApplyFailed", "Apply", err.Error())
		return ctrl.Result{}, err
	}
	r.rolling(ref, true) // reset
	r.Metrics.setReady(&p, true)
	return ctrl.Result{RequeueAfter: jitter(r.healthyRequeue())}, nil
}

// markCLIRun records in the status that a CLI run holds the lock, as Progressing
// with reason CLIRunInProgress, unless Progressing is already true (the CLI run said
// what it does: Applying, Upgrading). The write is conditional on the platform being
// as read, so it never overwrites what the CLI run recorded since; the run's own
// final status sets Progressing again. A failed write is only logged.
func (r *Reconciler) markCLIRun(ctx context.Context, p *v1alpha1.OntoPlatform, locked *apply.LockedError) {
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionProgressing); c != nil && c.Status == metav1.ConditionTrue {
		return
	}
	patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonCLIRunInProgress,
		Message:            fmt.Sprintf("%s holds the lock (until %s unless renewed); the watch reconciles after it", locked.Holder, locked.Expires.UTC().Format(time.RFC3339)),
		ObservedGeneration: p.Generation, LastTransitionTime: metav1.NewTime(r.now()),
	})
	p.Status.SyncConditions(p.Generation, metav1.NewTime(r.now()))
	if err := r.Client.Status().Patch(ctx, p, patch); err != nil {
		r.log().Debug("record the CLI run in the status", "err", err)
	}
}

// idle reports whether a pass has nothing to write: the status already records the
// current generation Ready, the last pass found every object as applied, and a plan
// made now without the lock (from the cache, with dry-runs only of objects whose
// resourceVersion moved) shows no change while every component is ready. Then the
// pass ends without taking the lock: an idle platform costs no write, not even the
// lock's Lease. Anything else goes the locked way, with the plan made here when there
// is one (nil otherwise).
func (r *Reconciler) idle(ctx context.Context, p *v1alpha1.OntoPlatform, ref string, d *plan.Desired, source string) (bool, *plan.Plan) {
	ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
	degraded := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionDegraded)
	if ready == nil || ready.Status != metav1.ConditionTrue || (degraded != nil && degraded.Status == metav1.ConditionTrue) ||
		p.Status.ObservedGeneration != p.Generation || len(r.fights.fighting(ref, r.now())) > 0 {
		return false, nil
	}
	if source == "" {
		return false, nil
	}
	skip := r.unchanged.skip(ref, desiredID(source, p))
	if skip == nil {
		return false, nil
	}
	pl, err := (&plan.Planner{Clients: r.Clients, KeepPlatformObjects: true, Unchanged: skip, Live: r.Live}).Plan(ctx, d)
	if err != nil {
		return false, nil
	}
	if pl.HasChanges() {
		return false, pl
	}
	comps, err := r.observe(ctx, d.Objects())
	if err != nil {
		return false, pl
	}
	readyN, total := health.CountReady(comps)
	return readyN == total, pl
}

// observe is the components' readiness, read from Live when set.
func (r *Reconciler) observe(ctx context.Context, objs []*unstructured.Unstructured) ([]v1alpha1.ComponentStatus, error) {
	if r.Live == nil {
		return health.ObserveComponents(ctx, r.Clients, objs)
	}
	lives := map[*unstructured.Unstructured]*unstructured.Unstructured{}
	for _, w := range objs {
		if !health.IsWorkload(w) {
			continue
		}
		m, err := r.Clients.Mapping(w)
		if err != nil {
			return nil, err
		}
		if lives[w], err = r.Live.Get(ctx, m, w.GetNamespace(), w.GetName()); err != nil {
			return nil, err
		}
	}
	return health.ComponentStatuses(objs, func(d *unstructured.Unstructured) *unstructured.Unstructured { return lives[d] }), nil
}

func isNotReady(err error) bool {
	var notReady *apply.PlaneNotReadyError
	return errors.As(err, &notReady)
}

// rolling is the requeue after a pass that stopped at a plane still rolling out:
// 15 s after a pass that wrote, then doubling up to 5 min while passes find nothing to
// write (a component crash-looping for an hour costs a dozen passes, not 240); the
// workloads' readiness changes bring the platform back sooner.
func (r *Reconciler) rolling(ref string, reset bool) time.Duration {
	r.rollingMu.Lock()
	defer r.rollingMu.Unlock()
	if r.rollingPasses == nil {
		r.rollingPasses = map[string]int{}
	}
	if reset {
		delete(r.rollingPasses, ref)
		return rollingRequeue
	}
	n := r.rollingPasses[ref]
	r.rollingPasses[ref] = n + 1
	return min(rollingRequeue<<min(n, 5), errorBackoffMax)
}

// livePlatform reads the OntoPlatform from the API server, not the cache.
func (r *Reconciler) livePlatform(ctx context.Context, p *v1alpha1.OntoPlatform) (*v1alpha1.OntoPlatform, error) {
	var live v1alpha1.OntoPlatform
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(p), &live); err != nil {
		return nil, err
	}
	return &live, nil
}

func (r *Reconciler) healthyRequeue() time.Duration {
	if r.HealthyRequeue > 0 {
		return r.HealthyRequeue
	}
	return healthyRequeue
}

func (r *Reconciler) lockTTL() time.Duration {
	if r.LockTTL > 0 {
		return r.LockTTL
	}
	return apply.DefaultOptions().LockTTL
}

// applier writes for one platform; each object it writes becomes an audit line and,
// summed up, an Event.
func (r *Reconciler) applier(p *v1alpha1.OntoPlatform, onApplied func(object string)) *apply.Applier {
	ref := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}.String()
	a := apply.NewApplier(r.Clients, r.log())
	a.Now = r.now
	a.Observer = func(ev apply.Event) {
		switch ev.Type {
		case apply.EventObjectApplied, apply.EventObjectDeleted:
			action := string(ev.Action)
			if ev.Type == apply.EventObjectDeleted {
				action = "delete"
			}
			if onApplied != nil {
				onApplied(ev.Object)
			}
			r.Audit.Write(AuditRecord{Time: r.now(), Platform: ref, Action: action, Object: ev.Object, Plane: ev.Plane, Reason: "reconcile"})
			r.objectEvent(p, ev.Ref, "Normal", "Reconciled", action, fmt.Sprintf("%s %s (plane %s)", action, ev.Object, ev.Plane))
		}
	}
	return a
}

// desired is what the platform renders. With its spec unchanged since the last
// successful run, that run's revision snapshot (spec, patches, release entry as
// applied: a --releases directory the CLI used may not be here), and source names it
// ("revision 7"); after a spec change, the spec with this binary's catalog entry of
// its version, and source is "".
func (r *Reconciler) desired(ctx context.Context, p *v1alpha1.OntoPlatform) (d *plan.Desired, rel release.Release, source string, err error) {
	if p.Status.ObservedGeneration == p.Generation {
		if n := apply.LatestSnapshot(p.Status.History, 0); n > 0 {
			source = fmt.Sprintf("revision %d", n)
			// What else the render reads: the parent's metadata and the raised limits.
			inputs := fmt.Sprint(p.Labels, p.Annotations, p.Status.Remediations)
			if kept, ok := r.renderedRevision(p, n, inputs); ok {
				if d, err := kept.render.desired(); err == nil {
					return d, kept.release, source, nil
				}
			}
			snap, err := apply.NewApplier(r.Clients, nil).LoadRevision(ctx, p.Namespace, p.Name, n)
			if err == nil {
				from := snap.Platform(p.Name, p.Namespace)
				from.Labels, from.Annotations = p.Labels, p.Annotations
				planes, err := platform.Loaded{Platform: from, Release: snap.Release, Remediations: p.Status.Remediations}.Render()
				if err != nil {
					return nil, snap.Release, source, err
				}
				if kept, err := compactRender(from, planes); err == nil {
					r.keepRendered(p, rendered{uid: p.UID, revision: n, inputs: inputs, render: kept, release: snap.Release})
				}
				d, err := plan.NewDesired(from, planes)
				return d, snap.Release, source, err
			}
			r.log().Warn("revision snapshot unreadable; rendering the spec", "revision", n, "err", err)
		}
	}
	rel, err = r.Catalog.Get(p.Spec.Version)
	if err != nil {
		return nil, release.Release{}, "", fmt.Errorf("spec.version: %w", err)
	}
	d, err = platform.Loaded{Platform: p.DeepCopy(), Release: rel, Remediations: p.Status.Remediations}.Desired()
	return d, rel, "", err
}

// rendered is a platform's revision as rendered. A revision's snapshot never changes
// (its digest is checked on load), so, with the same other inputs, a pass reuses the
// render of the last one: no read of the snapshot and no render per pass.
type rendered struct {
	// uid tells a platform deleted and made again, which numbers its revisions anew.
	uid      types.UID
	revision int64
	inputs   string
	render   keptRender
	release  release.Release
}

// keptRender is a render kept between passes, compressed: gzipped JSON is about 2% of
// the maps it holds, which were a large part of a big watch's live heap
// (docs/benchmarks.md). Decoding one back costs a few milliseconds a pass, against
// the render's tens.
type keptRender struct {
	platform *v1alpha1.OntoPlatform
	planes   []byte
}

func compactRender(p *v1alpha1.OntoPlatform, planes []render.Plane) (keptRender, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(planes); err != nil {
		return keptRender{}, err
	}
	if err := zw.Close(); err != nil {
		return keptRender{}, err
	}
	return keptRender{platform: p.DeepCopy(), planes: bytes.Clone(buf.Bytes())}, nil
}

// desired decodes the kept render (integers as int64, as a render has them) into
// the desired state it was.
func (k keptRender) desired() (*plan.Desired, error) {
	zr, err := gzip.NewReader(bytes.NewReader(k.planes))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var planes []render.Plane
	if err := utiljson.Unmarshal(data, &planes); err != nil {
		return nil, err
	}
	return plan.NewDesired(k.platform, planes)
}

func (r *Reconciler) renderedRevision(p *v1alpha1.OntoPlatform, n int64, inputs string) (rendered, bool) {
	r.renderedMu.Lock()
	defer r.renderedMu.Unlock()
	kept, ok := r.rendered[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
	return kept, ok && kept.uid == p.UID && kept.revision == n && kept.inputs == inputs
}

func (r *Reconciler) keepRendered(p *v1alpha1.OntoPlatform, kept rendered) {
	r.renderedMu.Lock()
	defer r.renderedMu.Unlock()
	if r.rendered == nil {
		r.rendered = map[types.NamespacedName]rendered{}
	}
	r.rendered[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = kept
}

// forget drops what is kept of a platform that is gone.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.renderedMu.Lock()
	defer r.renderedMu.Unlock()
	delete(r.rendered, key)
}

// report plans and records each drifted object, writing nothing (--drift=report).
func (r *Reconciler) report(ctx context.Context, p *v1alpha1.OntoPlatform, d *plan.Desired) (ctrl.Result, error) {
	planner := &plan.Planner{Clients: r.Clients, KeepPlatformObjects: true}
	pl, err := planner.Plan(ctx, d)
	if err != nil {
		return ctrl.Result{}, err
	}
	ref := p.Namespace + "/" + p.Name
	for _, pp := range pl.Planes {
		for _, c := range pp.Changes {
			if c.Action == plan.ActionUnchanged || pp.Name == plan.PlatformPlane {
				continue
			}
			r.Audit.Write(AuditRecord{Time: r.now(), Platform: ref, Action: "drift-" + string(c.Action), Object: c.Object.String(), Plane: pp.Name, Reason: "report"})
			r.event(p, "Warning", "Drift", "Report", fmt.Sprintf("%s %s differs from the applied spec (--drift=report: not repaired)", c.Action, c.Object))
		}
	}
	return ctrl.Result{RequeueAfter: jitter(r.healthyRequeue())}, nil
}

// upgrade moves the platform to its spec's new version as `kubectl onto upgrade`
// does, one component per pass: status.upgrade (driver watch) is where it is, and the
// next pass, a second later, goes on from there. A worker is held for one
// component's canary, soak and rollout, not for the whole upgrade, so the other
// platforms' passes (drift repairs) get a worker in between.
func (r *Reconciler) upgrade(ctx context.Context, p *v1alpha1.OntoPlatform) (ctrl.Result, error) {
	rel, err := r.Catalog.Get(p.Spec.Version)
	if err != nil {
		r.event(p, "Warning", "UnknownVersion", "Upgrade", err.Error())
		return ctrl.Result{}, fmt.Errorf("spec.version: %w", err)
	}
	opts := upgrade.DefaultOptions()
	opts.Apply.Holder, opts.Apply.LockTTL = r.Holder, r.lockTTL()
	// Its steps leave the CRD and the OntoPlatform's spec alone, as every pass does.
	opts.Apply.KeepPlatformObjects = true
	opts.MaxComponents, opts.Driver = 1, v1alpha1.UpgradeDriverWatch
	if s := r.Upgrade; s != nil {
		opts.CanarySoak, opts.CanaryTimeout, opts.Atomic = s.CanarySoak, s.CanaryTimeout, s.Atomic
	}
	u := upgrade.ForLoaded(r.applier(p, nil), platform.Loaded{Platform: p.DeepCopy(), Release: rel}, opts)
	u.Catalog = r.Catalog
	if p.Status.Upgrade == nil {
		r.event(p, "Normal", "Upgrading", "Upgrade", fmt.Sprintf("upgrading %s → %s, one component per pass", p.Status.Version, p.Spec.Version))
	}
	res, err := u.Run(ctx)
	if err == nil && res.Paused {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		var locked *apply.LockedError
		if errors.As(err, &locked) {
			return ctrl.Result{RequeueAfter: r.lockTTL()}, nil
		}
		r.event(p, "Warning", "UpgradeFailed", "Upgrade", err.Error())
		// Recorded in status.upgrade: not retried by itself.
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: jitter(r.healthyRequeue())}, nil
}

// finalize runs the ordered uninstall of a platform being deleted (volumes and
// generated Secrets kept), then lets the deletion finish.
func (r *Reconciler) finalize(ctx context.Context, p *v1alpha1.OntoPlatform) error {
	if !controllerutil.ContainsFinalizer(p, apply.Finalizer) {
		return nil
	}
	a := r.applier(p, nil)
	if terminating, err := r.namespaceTerminating(ctx, p.Namespace); err != nil {
		return err
	} else if terminating {
		// The namespace goes with everything in it, and the lock's Lease cannot be
		// created there any more: an ordered uninstall is neither possible nor needed.
		r.Metrics.forget(p)
		return a.RemoveFinalizer(ctx, p.Namespace, p.Name)
	}
	_, err := a.Uninstall(ctx, p.Namespace, p.Name, apply.UninstallOptions{Finalizing: true, PlaneTimeout: 5 * time.Minute,
		LockTTL: r.lockTTL(), Holder: r.Holder})
	var locked *apply.LockedError
	switch {
	case errors.As(err, &locked):
		return &requeueAfter{d: max(time.Second, locked.Expires.Sub(r.now())+time.Second), why: "uninstall waits for " + locked.Holder}
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		r.Metrics.forget(p)
		return a.RemoveFinalizer(ctx, p.Namespace, p.Name)
	case err != nil:
		r.event(p, "Warning", "UninstallFailed", "Uninstall", err.Error())
		return err
	}
	r.Audit.Write(AuditRecord{Time: r.now(), Platform: p.Namespace + "/" + p.Name, Action: "uninstall", Reason: "deleted"})
	r.Metrics.forget(p)
	if err := a.RemoveFinalizer(ctx, p.Namespace, p.Name); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func (r *Reconciler) event(p *v1alpha1.OntoPlatform, typ, reason, action, note string) {
	r.objectEvent(p, nil, typ, reason, action, note)
}

// objectEvent writes an Event on the platform about one of its objects, named as
// the Event's related object. The recorder merges the Events of one key (platform,
// related object, reason, action) into one series, so each object changed has an
// Event of its own: `kubectl get events` reads as a change log, not as one line
// counting every write of a pass.
func (r *Reconciler) objectEvent(p *v1alpha1.OntoPlatform, obj *plan.ObjectRef, typ, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	if len(note) > 1000 {
		note = note[:997] + "..."
	}
	var related runtime.Object
	if obj != nil {
		related = &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: obj.GroupVersionKind().GroupVersion().String(), Kind: obj.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Name},
		}
	}
	r.Recorder.Eventf(p, related, typ, reason, action, "%s", note)
}

// requeueAfter is a pass that must come back later without counting as a failure.
type requeueAfter struct {
	d   time.Duration
	why string
}

func (e *requeueAfter) Error() string { return e.why }

// namespaceTerminating reports whether namespace is being deleted.
func (r *Reconciler) namespaceTerminating(ctx context.Context, namespace string) (bool, error) {
	ns, err := r.Clients.Kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}
