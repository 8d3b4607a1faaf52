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
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Options tune one apply.
type Options struct {
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
	// Holder names this run in the lock lease.
	Holder string
	// Action is recorded in the revision history: apply, upgrade, rollback, scale.
	Action string
	// Preconditions makes each update fail if the live object changed since it was
	// planned (its resourceVersion), for applying a saved plan.
	Preconditions bool
	// Saved is a plan saved with `plan -o json` (apply --plan). It is applied as
	// reviewed, and refused before any write unless a plan made now, under the lock,
	// matches it change for change. Set Preconditions with it.
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
}

// DefaultOptions are the options of `kubectl onto apply` without flags.
func DefaultOptions() Options {
	return Options{Prune: true, MaxDeletes: -1, PlaneTimeout: 5 * time.Minute, Wait: true, LockTTL: 60 * time.Second, Action: "apply", CrashLoopRestarts: 3}
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

// Result is what an apply did.
type Result struct {
	Plan *plan.Plan
	// Applied counts the objects written (created, updated or deleted).
	Applied int
	// Status written to the OntoPlatform (nil when nothing needed writing).
	Status *v1alpha1.OntoPlatformStatus
}

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

// ConflictError is returned before any write when the plan would take something that
// is not this platform's: fields of other field managers (without ForceConflicts),
// objects of another platform (always), objects of no platform (without Adopt).
type ConflictError struct {
	Changes []plan.Change
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	b.WriteString("apply would take over what is not this platform's; nothing was written:")
	kinds := map[plan.ConflictKind]bool{}
	for _, c := range e.Changes {
		for _, cf := range c.Conflicts {
			kinds[cf.Kind] = true
			switch cf.Kind {
			case plan.ConflictInventory:
				fmt.Fprintf(&b, "\n  %s belongs to %s", c.Object, cf.Manager)
			case plan.ConflictUnowned:
				fmt.Fprintf(&b, "\n  %s exists and belongs to no platform", c.Object)
			default:
				fmt.Fprintf(&b, "\n  %s: %s is owned by field manager %q", c.Object, cf.Field, cf.Manager)
			}
		}
	}
	if kinds[plan.ConflictInventory] {
		b.WriteString("\nan object of another platform is never taken over: give this platform its own namespace, or uninstall the other one")
	}
	if kinds[plan.ConflictUnowned] {
		b.WriteString("\nre-run with --adopt to make the existing objects this platform's (they are then updated, and pruned when no longer rendered), or delete them")
	}
	if kinds[plan.ConflictFieldManager] || kinds[""] {
		b.WriteString("\nre-run with --force-conflicts to take the fields over, or remove the other manager's changes")
	}
	return b.String()
}

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
	planner := &plan.Planner{Clients: a.Clients, FieldManager: a.FieldManager, Adopt: opts.Adopt}
	done := map[plan.ObjectRef]bool{}

	// The lock comes first, so the plan is made and applied by one run at a time and no
	// run overwrites another's status. Its lease lives in the platform's namespace: on
	// a first install into a new namespace, plan without it, create the CRD and the
	// namespace (idempotent writes that every run would make alike), then take it.
	lockCtx, release, err := a.lock(ctx, d.Namespace, d.Platform.GetName(), opts.Holder, opts.LockTTL, opts.LockWait)
	var foundation *plan.Plan
	if errors.Is(err, errNamespaceMissing) {
		if foundation, err = a.installFoundation(ctx, planner, d, opts, done, res); err != nil {
			return res, err
		}
		lockCtx, release, err = a.lock(ctx, d.Namespace, d.Platform.GetName(), opts.Holder, opts.LockTTL, opts.LockWait)
	}
	if err != nil {
		return res, err
	}
	defer release()
	ctx = lockCtx

	p := foundation
	if p == nil || opts.Saved == nil {
		if p, err = planner.Plan(ctx, d); err != nil {
			return res, a.stopReason(ctx, err)
		}
	}
	if opts.Saved != nil && foundation == nil {
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
	if !writes(p, opts) {
		a.emit(Event{Type: EventNoChanges, Message: "no changes"})
		applyErr = a.checkHealth(ctx, d, opts)
	} else {
		applyErr = a.applyAll(ctx, d, p, opts, done, res)
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
	st, err := a.recordStatus(statusCtx, d, p, opts, applyErr, false)
	res.Status = st
	if err != nil {
		err = fmt.Errorf("record status of %s: %w", platformRef, err)
	}
	if applyErr != nil {
		return res, errors.Join(applyErr, err)
	}
	if err != nil {
		return res, err
	}
	if writes(p, opts) {
		a.emit(Event{Type: EventDone, Message: fmt.Sprintf("%d objects written", res.Applied)})
	}
	return res, nil
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
		if err := a.applyOne(ctx, first, opts); err != nil {
			return &ApplyError{Plane: plan.PlatformPlane, Object: parent.Object.String(), Err: err}
		}
		res.Applied++
	}
	if _, err := a.recordStatus(ctx, d, p, opts, nil, true); err != nil {
		return err
	}
	if err := a.applyPlanes(ctx, d, p, opts, done, res); err != nil {
		return err
	}
	if !opts.Prune {
		return nil
	}
	if err := a.prune(ctx, p, res); err != nil {
		return err
	}
	if len(pruneKinds) > 0 {
		// The parent was just written by this run: its planned resourceVersion is
		// stale, and the lock already keeps others out.
		opts.Preconditions = false
		if err := a.applyOne(ctx, parent, opts); err != nil {
			return &ApplyError{Plane: plan.PlatformPlane, Object: parent.Object.String(), Err: err}
		}
	}
	return nil
}

// checkHealth is the no-change path: nothing to write, so wait, plane by plane, until
// the platform's workloads are healthy, within the same timeouts as a writing run.
func (a *Applier) checkHealth(ctx context.Context, d *plan.Desired, opts Options) error {
	if !opts.Wait {
		return nil
	}
	for _, pl := range d.Planes {
		if err := a.waitPlane(ctx, d, string(pl.Name), opts, true); err != nil {
			a.emit(Event{Type: EventPlaneFailed, Plane: string(pl.Name), Message: err.Error()})
			return err
		}
	}
	return nil
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
	return err
}

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

// Preflight runs the checks of a plan that need no write: the delete guard, the
// version guard and conflicts with other field managers. apply runs it before its first
// write, and apply --dry-run=server too, so a dry run fails where the real run would.
func Preflight(p *plan.Plan, opts Options) error {
	if err := checkVersion(p, opts); err != nil {
		return err
	}
	if opts.MaxDeletes >= 0 && opts.Prune && p.Summary.Delete > opts.MaxDeletes {
		return fmt.Errorf("the plan deletes %d objects, more than --max-deletes=%d; nothing was written (review it with `kubectl onto plan`)", p.Summary.Delete, opts.MaxDeletes)
	}
	var conflicted []plan.Change
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			var blocking []plan.Conflict
			for _, cf := range c.Conflicts {
				switch {
				case cf.Kind == plan.ConflictUnowned && opts.Adopt:
				case (cf.Kind == plan.ConflictFieldManager || cf.Kind == "") && opts.ForceConflicts:
				default:
					blocking = append(blocking, cf)
				}
			}
			if len(blocking) > 0 {
				c.Conflicts = blocking
				conflicted = append(conflicted, c)
			}
		}
	}
	if len(conflicted) > 0 {
		return &ConflictError{Changes: conflicted}
	}
	return nil
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

// applyPlanes applies each plane's creates and updates, except those already done,
// then waits for the plane's workloads.
func (a *Applier) applyPlanes(ctx context.Context, d *plan.Desired, p *plan.Plan, opts Options, done map[plan.ObjectRef]bool, res *Result) error {
	for _, pl := range p.Planes {
		if pl.Name == plan.PlatformPlane {
			continue
		}
		var writes []plan.Change
		for _, c := range pl.Changes {
			if (c.Action == plan.ActionCreate || c.Action == plan.ActionUpdate || c.Action == plan.ActionReplace) && !done[c.Object] {
				writes = append(writes, c)
			}
		}
		a.emit(Event{Type: EventPlaneStarted, Plane: pl.Name, Message: fmt.Sprintf("%d to write", len(writes))})
		for _, wave := range writeWaves(writes) {
			if err := a.applyWave(ctx, pl.Name, wave, opts); err != nil {
				a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
				return err
			}
			res.Applied += len(wave)
		}
		if opts.Wait {
			if err := a.waitPlane(ctx, d, pl.Name, opts, false); err != nil {
				a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
				return err
			}
		}
		a.emit(Event{Type: EventPlaneReady, Plane: pl.Name})
	}
	return nil
}

// applyWave writes changes concurrently and stops at the first error.
func (a *Applier) applyWave(ctx context.Context, plane string, wave []plan.Change, opts Options) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(plan.DefaultConcurrency)
	for _, c := range wave {
		g.Go(func() error {
			write := a.applyOne
			if c.Action == plan.ActionReplace {
				write = a.replace
			}
			if err := write(gctx, c, opts); err != nil {
				return &ApplyError{Plane: plane, Object: c.Object.String(), Err: err}
			}
			a.emit(Event{Type: EventObjectApplied, Plane: plane, Object: c.Object.String(), Action: c.Action})
			return nil
		})
	}
	return g.Wait()
}

// writeWaves splits a plane's writes into waves written one after the other: what pods
// reference (ServiceAccounts, Secrets, ConfigMaps, Services...), then the workloads,
// then what refers to the workloads (autoscalers, disruption budgets). Within a wave
// writes run concurrently; across waves a pod never races its ServiceAccount or its
// new ConfigMap.
func writeWaves(writes []plan.Change) [][]plan.Change {
	var waves [3][]plan.Change
	for _, c := range writes {
		i := 0
		switch c.Object.Kind {
		case health.KindDeployment, health.KindStatefulSet:
			i = 1
		case "HorizontalPodAutoscaler", "PodDisruptionBudget":
			i = 2
		}
		waves[i] = append(waves[i], c)
	}
	var out [][]plan.Change
	for _, w := range waves {
		if len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// applyOne writes one create or update: server-side apply, or for a generated Secret a
// create with fresh random values.
func (a *Applier) applyOne(ctx context.Context, c plan.Change, opts Options) error {
	obj := c.Desired
	if obj == nil {
		return errors.New("the plan holds no object to apply")
	}
	if plan.IsGenerated(obj) {
		return a.createGeneratedSecret(ctx, obj)
	}
	ri, err := a.Clients.Resource(obj)
	if err != nil {
		return err
	}
	if opts.Preconditions && c.ResourceVersion != "" {
		obj = obj.DeepCopy()
		obj.SetResourceVersion(c.ResourceVersion)
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	force := opts.ForceConflicts || len(c.TakeOver) > 0
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: a.fieldManager(),
		Force:        &force,
	})
	switch {
	case isFieldManagerConflict(err):
		return fmt.Errorf("%w\nanother field manager owns some of these fields: re-run with --force-conflicts to take them over", err)
	case apierrors.IsConflict(err) && opts.Preconditions:
		return fmt.Errorf("it changed in the cluster since the saved plan was made (%w): make a new plan, review it and apply that", err)
	}
	return err
}

// isFieldManagerConflict reports whether err is a server-side apply conflict over
// fields another manager owns, as opposed to other 409s (a stale resourceVersion), for
// which --force-conflicts would be the wrong advice.
func isFieldManagerConflict(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

// waitPlane waits, by watch, until the plane's workloads are ready, reporting pod
// problems as they appear. It stops early when a new pod crash-loops, and explains
// from the pods why a workload is not ready when the plane timeout passes. quiet leaves
// out the workloads that are ready from the start (a run with nothing to write).
func (a *Applier) waitPlane(ctx context.Context, d *plan.Desired, plane string, opts Options, quiet bool) error {
	var objs []*unstructured.Unstructured
	for _, pl := range d.Planes {
		if string(pl.Name) == plane {
			objs = pl.Objects
		}
	}
	if !slices.ContainsFunc(objs, health.IsWorkload) {
		return nil
	}
	timeout := opts.PlaneTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := &health.Waiter{Dynamic: a.Clients.Dynamic, WatchPods: true, CrashLoopRestarts: opts.CrashLoopRestarts}
	var mu sync.Mutex
	shown := map[string]bool{}
	err := w.Wait(wctx, objs, a.Clients.GVR, func(u health.Update) {
		ref := kube.Ref(u.Object)
		mu.Lock()
		skip := quiet && u.Ready && !shown[ref]
		shown[ref] = shown[ref] || !u.Ready
		mu.Unlock()
		if !skip {
			a.emit(Event{Type: EventWaiting, Plane: plane, Object: ref, Ready: u.Ready, Message: u.Message})
		}
	})
	var crash *health.CrashLoopError
	if errors.As(err, &crash) {
		why := crash.Error()
		if explained, xerr := health.Explain(ctx, a.Clients.Kube, crash.Workload); xerr == nil && explained != "" {
			why += " (" + explained + ")"
		}
		return &ApplyError{Plane: plane, Object: kube.Ref(crash.Workload), Err: fmt.Errorf("%s; stopped without waiting out --plane-timeout (--crashloop-restarts=%d)", why, opts.CrashLoopRestarts)}
	}
	var create *health.PodCreateError
	if errors.As(err, &create) {
		return &ApplyError{Plane: plane, Object: kube.Ref(create.Workload), Err: fmt.Errorf("%w; stopped without waiting out --plane-timeout", create)}
	}
	var nr *health.NotReadyError
	if err != nil && !errors.As(err, &nr) {
		return &ApplyError{Plane: plane, Err: fmt.Errorf("wait for the plane's workloads: %w", err)}
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// Name the first workload that is not ready and why, from its pods.
	first := nr.Objects[0]
	why := nr.Reasons[first.GetName()+"/"+first.GetKind()]
	if explained, xerr := health.Explain(ctx, a.Clients.Kube, first); xerr == nil && explained != "" {
		why = explained
	}
	more := ""
	if len(nr.Objects) > 1 {
		more = fmt.Sprintf(" (and %d more not ready)", len(nr.Objects)-1)
	}
	return &ApplyError{Plane: plane, Object: kube.Ref(first),
		Err: fmt.Errorf("not ready after %s: %s%s", timeout, why, more)}
}

// prune deletes, in reverse plane order, the inventory members the plan marks.
func (a *Applier) prune(ctx context.Context, p *plan.Plan, res *Result) error {
	for i := len(p.Planes) - 1; i >= 0; i-- {
		pl := p.Planes[i]
		for _, c := range pl.Changes {
			if c.Action != plan.ActionDelete {
				continue
			}
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(c.Object.GroupVersionKind())
			obj.SetNamespace(c.Object.Namespace)
			obj.SetName(c.Object.Name)
			ri, err := a.Clients.Resource(obj)
			if err != nil {
				return &ApplyError{Plane: pl.Name, Object: c.Object.String(), Err: err}
			}
			policy := metav1.DeletePropagationBackground
			del := metav1.DeleteOptions{PropagationPolicy: &policy}
			if c.UID != "" {
				uid := types.UID(c.UID)
				del.Preconditions = &metav1.Preconditions{UID: &uid}
			}
			err = ri.Delete(ctx, c.Object.Name, del)
			if apierrors.IsConflict(err) {
				// Deleted and re-created since the plan: the object there now was never
				// planned for deletion.
				a.logger().Info("prune skipped: the object was replaced since the plan", "object", c.Object.String())
				continue
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return &ApplyError{Plane: pl.Name, Object: c.Object.String(), Err: fmt.Errorf("prune: %w", err)}
			}
			res.Applied++
			a.emit(Event{Type: EventObjectPruned, Plane: pl.Name, Object: c.Object.String(), Action: plan.ActionDelete})
		}
	}
	return nil
}
