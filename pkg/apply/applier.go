/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package apply executes a plan: it installs the CRD, stores the OntoPlatform, applies
// each plane with server-side apply (field manager kubectl-onto), waits until the plane
// is healthy before starting the next, prunes what the platform no longer renders, and
// records the result in the OntoPlatform's status. It prints nothing: progress goes to
// an observer as Events.
package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// Mode is whose run an apply is. Each mode is a set of behaviours that go together
// (who holds the lock, whether a revision is recorded, whether the run waits), so a
// caller names its run instead of combining switches into one no caller makes.
type Mode string

// Modes of an apply.
const (
	// ModeApply is `kubectl onto apply`, the zero value: it takes the platform's lock,
	// writes the CRD and the OntoPlatform's spec, waits for each plane (Wait), is
	// refused while status.upgrade is set, and records a revision.
	ModeApply Mode = ""
	// ModeLocked is ModeApply by a caller that holds the platform's lock
	// (Applier.Lock) and passes its context, so Apply takes none: scale, which reads
	// the revision it changes under the lock.
	ModeLocked Mode = "locked"
	// ModeUpgradeStep is a step of an upgrade or rollback, under the one lock the
	// upgrade holds for all its steps: it may run while status.upgrade is set, which
	// refuses a plain apply, records no revision (and no snapshot: the upgrade records
	// one when it ends), and does not report the run done (EventDone), which the
	// upgrade does once it recorded its own outcome.
	ModeUpgradeStep Mode = "upgrade-step"
	// ModeUpgradeEnd is the last apply of an upgrade or rollback: a ModeUpgradeStep
	// that records the revision of the whole run.
	ModeUpgradeEnd Mode = "upgrade-end"
	// ModeReconcile is the watch reconciler's pass, under the lock it holds. The CRD
	// and the OntoPlatform's spec are not written (users and GitOps own them: the
	// parent gets only its inventory annotations, by merge patch), and nothing is
	// waited for: after writing a plane, or finding nothing to write, a plane whose
	// workloads are not ready now stops the run with a *PlaneNotReadyError, and the
	// reconciler comes back when they change instead of blocking a worker. A revision
	// is recorded only when a changed spec converges, not for each repair of drift.
	ModeReconcile Mode = "reconcile"
)

// lockHeld: the caller holds the platform's lock; Apply takes none.
func (m Mode) lockHeld() bool { return m != ModeApply }

// upgradeStep: the run is part of an upgrade or rollback.
func (m Mode) upgradeStep() bool { return m == ModeUpgradeStep || m == ModeUpgradeEnd }

// preconditions: each update fails if the live object changed since it was planned.
func (o Options) preconditions() bool { return o.Saved != nil && !o.noPreconditions }

// Options tune one apply.
type Options struct {
	// Mode is whose run this is: the CLI's apply when zero.
	Mode Mode
	// ForceConflicts takes over fields other managers own instead of failing.
	ForceConflicts bool
	// Adopt makes live objects with a rendered name that belong to no platform this
	// platform's, instead of failing.
	Adopt bool
	// Prune deletes inventory members the platform no longer renders.
	Prune bool
	// MaxDeletes refuses a plan that deletes more objects; negative means no limit.
	MaxDeletes int
	// PlaneTimeout bounds the wait for each plane to become healthy.
	PlaneTimeout time.Duration
	// Wait for each plane to become healthy before the next; off only for tests and
	// GitOps-style fire-and-forget.
	Wait bool
	// LockTTL is how long the lock lease lives without renewal.
	LockTTL time.Duration
	// LockWait is how long to wait for another run's lock; 0 fails at once.
	LockWait time.Duration
	// RetryBudget is how long a write that fails transiently (the API server
	// restarting or overloaded, an etcd leader change) is retried before the run
	// fails naming the object; 0 does not retry.
	RetryBudget time.Duration
	// Holder names this run in the lock lease.
	Holder string
	// Action is recorded in the revision history: apply, upgrade, rollback, scale.
	Action string
	// Saved is a plan saved with `plan -o json` (apply --plan). It is applied as
	// reviewed, and refused before any write unless a plan made now, under the lock,
	// matches it change for change; each update fails if the live object changed
	// since the plan was made (its resourceVersion).
	Saved *plan.Plan
	// Release is the catalog entry of the version applied. With it, a change of the
	// installed version must follow the release's upgrade path; nil skips the check.
	Release *release.Release
	// ForceVersion applies a downgrade or a version off the upgrade path.
	ForceVersion bool
	// CrashLoopRestarts fails a plane as soon as a pod of a workload's new revision
	// has crash-looped this many times, instead of waiting out the plane timeout; 0
	// never fails early.
	CrashLoopRestarts int32
	// Only limits planning (and so writing) to the objects it accepts; others that
	// exist are taken as unchanged (plan.Planner.Only). nil plans everything.
	Only func(*unstructured.Unstructured) bool
	// KeepPlatformObjects writes neither the CRD nor the OntoPlatform's spec (only its
	// inventory metadata), as ModeReconcile does: the watch's upgrades, whose steps
	// otherwise apply as the CLI does.
	KeepPlatformObjects bool
	// Unchanged takes an existing object as unchanged without a dry-run when it
	// returns true (plan.Planner.Unchanged).
	Unchanged func(obj, live *unstructured.Unstructured) bool
	// Generation is the OntoPlatform generation the run rendered, when the caller
	// read it from the cluster (ModeReconcile): the status records that one, since the
	// live object may have moved on while the run wrote. 0 records the live one (the
	// CLI applies the spec itself).
	Generation int64
	// Live is where the plan reads live objects (plan.Planner.Live); the API server
	// when nil. The watch passes its cache.
	Live plan.LiveSource
	// Shared are the live objects of every platform of the run, listed once
	// (plan.Planner.Shared): apply of a directory.
	Shared *plan.SharedLists
	// Planned is a plan the caller made of the same desired state with the same
	// options, taken as this run's plan instead of planning again: the watch's, made
	// by its unlocked idle check, which found the drift it now repairs. Unlike Saved,
	// it is not checked against a fresh plan; a first install (no namespace yet)
	// ignores it.
	Planned *plan.Plan
	// noPreconditions: Saved's preconditions do not hold for a write of an object
	// this run already wrote (its planned resourceVersion is stale).
	noPreconditions bool
	// Degraded, when set, is recorded as the Degraded condition of a run whose
	// workloads are all ready: the watch's drift fight, which leaves an object as
	// another manager set it.
	Degraded *DegradedReason
}

// DegradedReason is a Degraded condition's reason and message.
type DegradedReason struct {
	Reason, Message string
}

// PlaneNotReadyError stops a ModeReconcile run at the first plane whose workloads are not
// ready: the later planes wait for it, as in an apply that waits.
type PlaneNotReadyError struct {
	Plane string
	// NotReady names the components not ready, with why.
	NotReady string
}

func (e *PlaneNotReadyError) Error() string {
	return fmt.Sprintf("plane %s is not ready yet: %s", e.Plane, e.NotReady)
}

// DefaultOptions are the options of `kubectl onto apply` without flags.
func DefaultOptions() Options {
	return Options{Prune: true, MaxDeletes: -1, PlaneTimeout: 5 * time.Minute, Wait: true, LockTTL: 60 * time.Second, Action: "apply", CrashLoopRestarts: 3,
		RetryBudget: 30 * time.Second}
}

// Applier applies plans to one cluster.
type Applier struct {
	Clients *kube.Clients
	// FieldManager of every write; plan.FieldManager when empty.
	FieldManager string
	// Now is the clock, for lease times and revision history.
	Now func() time.Time
	Log *slog.Logger
	// Observer hears progress; it may be nil.
	Observer func(Event)
	// Process is recorded on the lock lease (CurrentProcess for the CLI), so a run on
	// the same host can take over the lock of a process that died. The zero value
	// records nothing.
	Process Process
}

// NewApplier returns the Applier every writer of a platform uses, the CLI's commands
// and the watch alike, so that they write the same way: field manager kubectl-onto,
// the wall clock, this process recorded on the lock lease (CurrentProcess: a run on
// the same host may take over the lock of one that died), log (nothing when nil).
// Set Observer to hear the progress; a test may set Now.
func NewApplier(clients *kube.Clients, log *slog.Logger) *Applier {
	return &Applier{Clients: clients, Now: time.Now, Log: log, Process: CurrentProcess()}
}

// Result is what an apply did.
type Result struct {
	Plan *plan.Plan
	// Applied counts the objects written (created, updated or deleted).
	Applied int
	// Status written to the OntoPlatform (nil when nothing needed writing).
	Status *v1alpha1.OntoPlatformStatus
}

// UnrepairedError says which objects a ModeReconcile run could not write, with the API
// server's answer for each; the run wrote everything else.
type UnrepairedError struct {
	Err error
}

func (e *UnrepairedError) Error() string {
	return "not repaired, the API server refuses: " + strings.ReplaceAll(e.Err.Error(), "\n", "; ")
}

func (e *UnrepairedError) Unwrap() error { return e.Err }

// ApplyError names the plane and object where an apply stopped.
type ApplyError struct {
	Plane  string
	Object string
	Err    error
}

func (e *ApplyError) Error() string {
	if e.Object == "" {
		return fmt.Sprintf("plane %s: %v", e.Plane, e.Err)
	}
	return fmt.Sprintf("plane %s: %s: %v", e.Plane, e.Object, e.Err)
}

func (e *ApplyError) Unwrap() error { return e.Err }

func (a *Applier) fieldManager() string {
	if a.FieldManager != "" {
		return a.FieldManager
	}
	return plan.FieldManager
}

func (a *Applier) emit(e Event) {
	if a.Observer != nil {
		a.Observer(e)
	}
}

func (a *Applier) logger() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Apply applies d: under the platform's lock it plans (or checks a saved plan against
// a fresh one), runs the checks that need no write (conflicts, the delete guard, the
// version guard), then writes plane by plane and waits for each. A plan without
// changes writes nothing but still waits until the platform is healthy and fails when
// it is not: apply means "this spec, healthy", so a retried failed run stays failed.
func (a *Applier) Apply(ctx context.Context, d *plan.Desired, opts Options) (*Result, error) {
	res := &Result{}
	// lists keep what the plan listed, for the health check of a run that writes
	// nothing.
	lists := &plan.Lists{}
	planner := &plan.Planner{Clients: a.Clients, FieldManager: a.FieldManager, Adopt: opts.Adopt, Only: opts.Only, Unchanged: opts.Unchanged, KeepGoing: opts.Mode == ModeReconcile,
		KeepPlatformObjects: opts.Mode == ModeReconcile || opts.KeepPlatformObjects, Live: opts.Live, Shared: opts.Shared, Now: a.Now, Lists: lists}
	done := map[plan.ObjectRef]bool{}

	// The lock comes first, so the plan is made and applied by one run at a time and no
	// run overwrites another's status. Its lease lives in the platform's namespace: on
	// a first install into a new namespace, plan without it, create the CRD and the
	// namespace (idempotent writes that every run would make alike), then take it.
	// Another platform's namespace is refused before anything is written there, the
	// lock's lease included.
	if err := planner.CheckNamespace(ctx, d); err != nil {
		return res, err
	}
	var foundation *plan.Plan
	if !opts.Mode.lockHeld() {
		lockCtx, release, err := a.Lock(ctx, d.Namespace, d.Platform.GetName(), opts)
		if errors.Is(err, errNamespaceMissing) {
			if foundation, err = a.installFoundation(ctx, planner, d, opts, done, res); err != nil {
				return res, err
			}
			lockCtx, release, err = a.Lock(ctx, d.Namespace, d.Platform.GetName(), opts)
		}
		if err != nil {
			return res, err
		}
		defer release()
		ctx = lockCtx
	}
	var err error

	p := foundation
	if p == nil && opts.Planned != nil {
		p = opts.Planned
	} else if p == nil || opts.Saved == nil {
		if p, err = planner.Plan(ctx, d); err != nil {
			return res, a.stopReason(ctx, err)
		}
	}
	if foundation == nil {
		// The plan made now (a foundation's was checked before its first write).
		if err := CheckSecrets(p); err != nil {
			return res, err
		}
	}
	if opts.Saved != nil && foundation == nil {
		// What this run would do now must pass as well: a saved plan is never a way
		// around the checks (a plan made with --adopt, applied without it).
		if err := Preflight(p, opts); err != nil {
			return res, err
		}
		if err := plan.Verify(opts.Saved, p); err != nil {
			return res, err
		}
	}
	if opts.Saved != nil {
		// Applied as reviewed; on a first install it was checked before the namespace
		// existed, against a plan made the same way.
		p = opts.Saved
	}
	res.Plan = p
	if err := Preflight(p, opts); err != nil {
		return res, err
	}
	// Allowed, but beyond the platform (a shared namespace's Pod Security labels): said
	// before the first write, where a user watching can still stop the run.
	for _, w := range p.Warnings {
		a.emit(Event{Type: EventWarning, Message: w})
	}
	replan, err := a.applyFoundation(ctx, d, p, opts, done, res)
	if err != nil {
		return res, err
	}
	// Objects in a namespace that did not exist, or of a CRD that was not served, could
	// not be dry-run. Plan again now, so the API server validates every object before
	// the first plane is written: a rejected object stops the run with nothing
	// half-applied. A saved plan is applied as reviewed instead.
	if replan && opts.Saved == nil {
		fresh, err := planner.Plan(ctx, d)
		if err != nil {
			return res, fmt.Errorf("validate the plan with the API server: %w", a.stopReason(ctx, err))
		}
		if err := Preflight(fresh, opts); err != nil {
			return res, err
		}
		p, res.Plan = fresh, fresh
	}
	platformRef := p.Platform.Namespace + "/" + p.Platform.Name

	var applyErr error
	// observed is what the health check read of the components when it found them all
	// ready without waiting: the status records it as is, without reading it again.
	var observed []v1alpha1.ComponentStatus
	if !writes(p, opts) {
		a.emit(Event{Type: EventNoChanges, Message: "no changes"})
		// Nothing was written since the plan listed the workloads: their status as
		// listed is as fresh as a read now, and costs no request. A saved or given
		// plan listed nothing in this run.
		known := lists
		if opts.Saved != nil || opts.Planned != nil {
			known = nil
		}
		observed, applyErr = a.checkHealthKnown(ctx, d, opts, known)
	} else {
		applyErr = a.applyAll(ctx, d, p, opts, done, res)
		if applyErr == nil {
			// Each plane served its new spec when the next one started; here the
			// rollouts finish and every workload turns Available, or one that degraded
			// meanwhile fails the run. "Healthy" is the whole platform at the end. What
			// is only rolling (an autoscaler scaling) is waited for, not failed.
			observed, applyErr = a.checkHealth(ctx, d, opts)
		}
	}
	// Objects the plan could not include (a ModeReconcile run keeps going without them)
	// fail the run after everything else was written, each named in the status.
	if failed := p.FailedError(); failed != nil {
		applyErr = errors.Join(&UnrepairedError{Err: failed}, applyErr)
	}
	applyErr = a.stopReason(ctx, applyErr)
	var lost *LostError
	if errors.As(applyErr, &lost) {
		// The new holder owns the platform's status now.
		return res, applyErr
	}
	// The outcome is recorded even when ctx was cancelled (Ctrl-C), so the platform is
	// not left looking Progressing. The lock is still held: release runs after this.
	statusCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if applyErr != nil {
		observed = nil
	}
	st, err := a.recordStatus(statusCtx, d, p, opts, applyErr, false, observed)
	res.Status = st
	if err != nil {
		err = fmt.Errorf("record status of %s: %w", platformRef, err)
	}
	final := Event{Type: EventDone, Message: fmt.Sprintf("%d objects written", res.Applied)}
	if !writes(p, opts) {
		final.Message = "nothing to write"
	}
	if applyErr != nil || err != nil {
		final = Event{Type: EventFailed, Message: errors.Join(applyErr, err).Error()}
	}
	if st != nil {
		final.Phase, final.Version, final.ReadyComponents = string(st.Phase), st.Version, st.ReadyComponents
	}
	// A step of an upgrade or rollback is not the end of the run: its status still
	// says Upgrading. The run says it is done once it recorded its own outcome.
	if final.Type != EventDone || !opts.Mode.upgradeStep() {
		a.emit(final)
	}
	if applyErr != nil {
		return res, errors.Join(applyErr, err)
	}
	return res, err
}

// installFoundation is the first step of an install into a namespace that does not
// exist yet: plan (nothing in the namespace can be dry-run, so most objects are plain
// creates), refuse what would be refused, then create the CRD and the namespace, so
// the lock's lease has a namespace to live in. It returns the plan it checked.
func (a *Applier) installFoundation(ctx context.Context, planner *plan.Planner, d *plan.Desired, opts Options, done map[plan.ObjectRef]bool, res *Result) (*plan.Plan, error) {
	p, err := planner.Plan(ctx, d)
	if err != nil {
		return nil, err
	}
	if err := CheckSecrets(p); err != nil {
		return nil, err
	}
	if opts.Saved != nil {
		if err := plan.Verify(opts.Saved, p); err != nil {
			return nil, err
		}
		p = opts.Saved
	}
	if err := Preflight(p, opts); err != nil {
		return nil, err
	}
	if _, err := a.applyFoundation(ctx, d, p, opts, done, res); err != nil {
		return nil, err
	}
	return p, nil
}

// applyFoundation writes the CRD and the namespace when p creates or updates them and
// this run has not yet; it reports whether either was created, which makes the rest of
// p unvalidated.
func (a *Applier) applyFoundation(ctx context.Context, d *plan.Desired, p *plan.Plan, opts Options, done map[plan.ObjectRef]bool, res *Result) (created bool, err error) {
	crd := p.Plane(plan.PlatformPlane).Changes[0]
	if (crd.Action == plan.ActionCreate || crd.Action == plan.ActionUpdate) && !done[crd.Object] {
		if err := a.applyOne(ctx, crd, opts); err != nil {
			return false, &ApplyError{Plane: plan.PlatformPlane, Object: crd.Object.String(), Err: err}
		}
		res.Applied++
		done[crd.Object] = true
		if err := a.waitCRD(ctx, d.CRD.GetName()); err != nil {
			return false, &ApplyError{Plane: plan.PlatformPlane, Object: crd.Object.String(), Err: err}
		}
		a.Clients.Mapper.Reset()
		created = crd.Action == plan.ActionCreate
	}
	if ns := findNamespace(p); ns != nil && ns.Action != plan.ActionUnchanged && ns.Action != plan.ActionDelete && !done[ns.Object] {
		if err := a.applyOne(ctx, *ns, opts); err != nil {
			return false, &ApplyError{Plane: "tenancy", Object: ns.Object.String(), Err: err}
		}
		res.Applied++
		if ns.Action == plan.ActionCreate {
			if err := a.markCreated(ctx, ns.Object.Name, d.Platform.GetName()); err != nil {
				return false, &ApplyError{Plane: "tenancy", Object: ns.Object.String(), Err: err}
			}
		}
		done[ns.Object] = true
		created = created || ns.Action == plan.ActionCreate
	}
	return created, nil
}

// CreatedByAnnotation marks a namespace that apply created for a platform (its value is
// the platform's name): uninstall --delete-data deletes only such a namespace, never one
// the user made beforehand.
const CreatedByAnnotation = "onto.paas/created-by"

// markCreated records on the namespace that this run created it. It is written by a
// field manager of its own, with an update: later applies of the rendered namespace
// (which does not carry it) must not remove it.
func (a *Applier) markCreated(ctx context.Context, namespace, platform string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, CreatedByAnnotation, platform)
	_, err := a.Clients.Kube.CoreV1().Namespaces().Patch(ctx, namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: a.fieldManager() + "-created-by"})
	if err != nil {
		return fmt.Errorf("record that the namespace was created for the platform: %w", err)
	}
	return nil
}

// applyAll writes a plan with changes: the parent, the planes in order (each waited
// for), prune, and the parent's final kinds.
func (a *Applier) applyAll(ctx context.Context, d *plan.Desired, p *plan.Plan, opts Options, done map[plan.ObjectRef]bool, res *Result) error {
	// The parent is applied from d, not from the change: an unchanged parent carries
	// no desired object, yet must be written when the kinds below change.
	parent := p.Plane(plan.PlatformPlane).Changes[1]
	parent.Desired = d.Platform
	// The parent lists the kinds of its members. Until prune has run it must also list
	// the kinds only the objects to prune have, or a failed run would orphan them
	// (kubectl's ApplySet does the same): the union now, the exact set after prune.
	pruneKinds := deleteKinds(p)
	if len(pruneKinds) > 0 || parent.Action != plan.ActionUnchanged {
		first := parent
		first.Desired = withKinds(d.Platform, pruneKinds)
		if err := a.applyParent(ctx, first, opts); err != nil {
			return &ApplyError{Plane: plan.PlatformPlane, Object: parent.Object.String(), Err: err}
		}
		res.Applied++
	}
	if _, err := a.recordStatus(ctx, d, p, opts, nil, true, nil); err != nil {
		return err
	}
	if err := a.applyPlanes(ctx, d, p, opts, done, res); err != nil {
		return err
	}
	if !opts.Prune {
		return nil
	}
	if err := a.prune(ctx, p, opts, res); err != nil {
		return err
	}
	if len(pruneKinds) > 0 {
		// The parent was just written by this run: its planned resourceVersion is
		// stale, and the lock already keeps others out.
		opts.noPreconditions = true
		if err := a.applyParent(ctx, parent, opts); err != nil {
			return &ApplyError{Plane: plan.PlatformPlane, Object: parent.Object.String(), Err: err}
		}
	}
	return nil
}

// applyParent writes the OntoPlatform: applied like any object, or in a ModeReconcile run
// only its inventory labels and annotations, by merge patch. A server-side apply of
// the metadata alone by the same field manager would remove the spec fields the CLI
// applied under it.
func (a *Applier) applyParent(ctx context.Context, c plan.Change, opts Options) error {
	if opts.Mode != ModeReconcile && !opts.KeepPlatformObjects {
		return a.applyOne(ctx, c, opts)
	}
	ri, err := a.Clients.Resource(c.Desired)
	if err != nil {
		return err
	}
	// Only the inventory's keys: the labels and annotations others put on the
	// OntoPlatform (GitOps tracking, users) stay as they are.
	labelKeys, annotationKeys := plan.InventoryMetadata()
	labels, annotations := map[string]any{}, map[string]any{}
	for _, k := range labelKeys {
		labels[k] = c.Desired.GetLabels()[k]
	}
	for _, k := range annotationKeys {
		annotations[k] = c.Desired.GetAnnotations()[k]
	}
	meta := map[string]any{"labels": labels, "annotations": annotations}
	data, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, c.Desired.GetName(), types.MergePatchType, data, metav1.PatchOptions{FieldManager: a.fieldManager()})
	return err
}

// checkReady is a ModeReconcile run's check of one plane, or of all (plane ""): the
// workloads as they are now, without waiting, those known found there (nil: all
// read). With every component ready it returns what it saw.
func (a *Applier) checkReady(ctx context.Context, d *plan.Desired, plane string, known func(*unstructured.Unstructured) (*unstructured.Unstructured, bool)) ([]v1alpha1.ComponentStatus, error) {
	var all []v1alpha1.ComponentStatus
	for _, pl := range d.Planes {
		if plane != "" && string(pl.Name) != plane {
			continue
		}
		// Per plane, as each plane's autoscalers are rendered in the plane of the
		// workload they scale: the same statuses as one look at every object.
		comps, err := health.ObserveComponentsKnown(ctx, a.Clients, pl.Objects, known)
		if err != nil {
			return nil, err
		}
		var notReady []string
		for _, c := range comps {
			if !c.Ready {
				notReady = append(notReady, fmt.Sprintf("%s %d/%d %s", c.Name, c.ReadyReplicas, c.DesiredReplicas, c.Message))
			}
		}
		if len(notReady) > 0 {
			return nil, &PlaneNotReadyError{Plane: string(pl.Name), NotReady: strings.Join(notReady, "; ")}
		}
		all = append(all, comps...)
	}
	return all, nil
}

// checkHealth waits, plane by plane, until the platform's workloads are healthy,
// within the same timeouts as the planes' writes: the whole check of a run with
// nothing to write, the last step of one that wrote. When every component was ready at
// the first look it returns what it saw, so the status need not read it again.
func (a *Applier) checkHealth(ctx context.Context, d *plan.Desired, opts Options) ([]v1alpha1.ComponentStatus, error) {
	return a.checkHealthKnown(ctx, d, opts, nil)
}

// checkHealthKnown is checkHealth with the workloads found in lists (the plan's, when
// nothing was written since) taken from there instead of read again.
func (a *Applier) checkHealthKnown(ctx context.Context, d *plan.Desired, opts Options, lists *plan.Lists) ([]v1alpha1.ComponentStatus, error) {
	if opts.Mode != ModeReconcile && !opts.Wait {
		return nil, nil
	}
	// The usual case, a healthy platform, costs one read per workload: the planes
	// whose components are all ready need no watch.
	var known func(*unstructured.Unstructured) (*unstructured.Unstructured, bool)
	// A reconciler's lists may come from its cache (opts.Live), which can lag behind a
	// rollout: its check reads the workloads then. Lists from the API server (its first
	// pass, as a CLI run's) are as fresh as a read.
	if lists != nil && (opts.Mode != ModeReconcile || opts.Live == nil) {
		known = func(w *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
			m, err := a.Clients.Mapping(w)
			if err != nil {
				return nil, false
			}
			return lists.Find(m.Resource, w.GetNamespace(), w.GetName())
		}
	}
	if opts.Mode == ModeReconcile {
		return a.checkReady(ctx, d, "", known)
	}
	comps, err := health.ObserveComponentsKnown(ctx, a.Clients, d.Objects(), known)
	if err != nil {
		return nil, err
	}
	notReady := map[string]bool{}
	for _, c := range comps {
		if !c.Ready {
			notReady[c.Plane] = true
		}
	}
	if len(notReady) == 0 {
		return comps, nil
	}
	for _, pl := range d.Planes {
		// A component not ready whose plane is unknown (no plane label) is waited for
		// in every plane rather than skipped.
		if !notReady[string(pl.Name)] && !notReady[""] {
			continue
		}
		if err := a.waitPlane(ctx, d, string(pl.Name), opts, nil, true); err != nil {
			a.emit(Event{Type: EventPlaneFailed, Plane: string(pl.Name), Message: err.Error()})
			return nil, err
		}
	}
	return nil, nil
}

// stopReason turns the cancellation of a run that lost its lock into the reason,
// naming the new holder, instead of "context canceled".
func (a *Applier) stopReason(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var lost *LostError
	if cause := context.Cause(ctx); errors.As(cause, &lost) && !errors.As(err, &lost) {
		var ae *ApplyError
		if errors.As(err, &ae) {
			return &ApplyError{Plane: ae.Plane, Object: ae.Object, Err: lost}
		}
		return lost
	}
	if errors.As(err, &lost) {
		return err
	}
	return &InterruptedError{Err: err}
}

// InterruptedError is the end of a run whose context was cancelled by its caller
// (Ctrl-C, SIGTERM, a deadline): not a failure of the platform. What the run wrote
// stays; a re-run plans from the cluster and finishes.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }
func (e *InterruptedError) Unwrap() error { return e.Err }

// writes reports whether applying p with opts writes anything: deletes count only when
// prune is on.
func writes(p *plan.Plan, opts Options) bool {
	return p.Summary.Create+p.Summary.Update+p.Summary.Replace > 0 || (opts.Prune && p.Summary.Delete > 0)
}

// deleteKinds are the group-kinds of the plan's deletes.
func deleteKinds(p *plan.Plan) []schema.GroupKind {
	var out []schema.GroupKind
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			if c.Action == plan.ActionDelete {
				out = append(out, c.Object.GroupVersionKind().GroupKind())
			}
		}
	}
	return inventory.Union(out)
}

// withKinds returns parent with extra group-kinds added to its inventory annotation.
func withKinds(parent *unstructured.Unstructured, extra []schema.GroupKind) *unstructured.Unstructured {
	if len(extra) == 0 || parent == nil {
		return parent
	}
	out := parent.DeepCopy()
	ann := out.GetAnnotations()
	ann[inventory.ContainsGroupKindsAnnot] = inventory.FormatGroupKinds(inventory.Union(inventory.ParseGroupKinds(ann[inventory.ContainsGroupKindsAnnot]), extra))
	out.SetAnnotations(ann)
	return out
}

func findNamespace(p *plan.Plan) *plan.Change {
	for i := range p.Planes {
		for j := range p.Planes[i].Changes {
			c := &p.Planes[i].Changes[j]
			if c.Object.Kind == "Namespace" && c.Object.Group == "" && c.Object.Name == p.Platform.Namespace {
				return c
			}
		}
	}
	return nil
}
