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
)

// Options tune one apply.
type Options struct {
	// ForceConflicts takes over fields other managers own instead of failing.
	ForceConflicts bool
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
	// Holder names this run in the lock lease.
	Holder string
	// Action is recorded in the revision history: apply, upgrade, rollback, scale.
	Action string
	// Preconditions makes each update fail if the live object changed since it was
	// planned (its resourceVersion), for applying a saved plan.
	Preconditions bool
}

// DefaultOptions are the options of `kubectl onto apply` without flags.
func DefaultOptions() Options {
	return Options{Prune: true, MaxDeletes: -1, PlaneTimeout: 5 * time.Minute, Wait: true, LockTTL: 60 * time.Second, Action: "apply"}
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

// ConflictError is returned before any write when the plan takes fields from other
// managers and ForceConflicts is off.
type ConflictError struct {
	Changes []plan.Change
}

func (e *ConflictError) Error() string {
	msg := "apply would take over fields owned by other field managers:"
	for _, c := range e.Changes {
		for _, cf := range c.Conflicts {
			msg += fmt.Sprintf("\n  %s: %s (owned by %q)", c.Object, cf.Field, cf.Manager)
		}
	}
	return msg + "\nnothing was written; re-run with --force-conflicts to take them over, or remove the other manager's changes"
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

// Apply executes p, computed from d. Checks that need no write (conflicts, the delete
// guard) run first, so a refused plan writes nothing. A plan without changes writes
// nothing at all unless the recorded status is out of date.
func (a *Applier) Apply(ctx context.Context, d *plan.Desired, p *plan.Plan, opts Options) (*Result, error) {
	res := &Result{Plan: p}
	if pp := p.Plane(plan.PlatformPlane); pp == nil || len(pp.Changes) != 2 {
		return res, fmt.Errorf("the plan has no %q plane with the CRD and the OntoPlatform: make it with kubectl onto plan", plan.PlatformPlane)
	}
	if err := preflight(p, opts); err != nil {
		return res, err
	}
	platformRef := p.Platform.Namespace + "/" + p.Platform.Name
	if !writes(p, opts) {
		a.emit(Event{Type: EventNoChanges, Message: "no changes"})
		st, err := a.recordStatus(ctx, d, p, opts, nil, false)
		res.Status = st
		return res, err
	}

	// The CRD and namespace come before the lock: the lock lives in the namespace,
	// and the OntoPlatform needs its CRD. Both writes are idempotent.
	platformChanges := p.Plane(plan.PlatformPlane).Changes
	if c := platformChanges[0]; c.Action == plan.ActionCreate || c.Action == plan.ActionUpdate {
		if err := a.applyOne(ctx, c, opts); err != nil {
			return res, &ApplyError{Plane: plan.PlatformPlane, Object: c.Object.String(), Err: err}
		}
		res.Applied++
		if err := a.waitCRD(ctx, d.CRD.GetName()); err != nil {
			return res, &ApplyError{Plane: plan.PlatformPlane, Object: c.Object.String(), Err: err}
		}
		a.Clients.Mapper.Reset()
	}
	done := map[plan.ObjectRef]bool{}
	replan := platformChanges[0].Action == plan.ActionCreate
	if ns := findNamespace(p); ns != nil && ns.Action != plan.ActionUnchanged {
		if err := a.applyOne(ctx, *ns, opts); err != nil {
			return res, &ApplyError{Plane: "tenancy", Object: ns.Object.String(), Err: err}
		}
		res.Applied++
		done[ns.Object] = true
		replan = replan || ns.Action == plan.ActionCreate
	}
	// On a first install nothing in the new namespace could be dry-run. Plan again now
	// that it exists, so the API server validates every object before the first plane
	// is written: a rejected object stops the run with nothing half-applied. A saved
	// plan is applied as reviewed instead.
	if replan && !opts.Preconditions {
		fresh, err := (&plan.Planner{Clients: a.Clients, FieldManager: a.FieldManager}).Plan(ctx, d)
		if err != nil {
			return res, fmt.Errorf("validate the plan with the API server: %w", err)
		}
		if err := preflight(fresh, opts); err != nil {
			return res, err
		}
		p, res.Plan = fresh, fresh
		platformChanges = p.Plane(plan.PlatformPlane).Changes
	}

	// ctx ends if the lease is lost (another run took it over): stop writing then.
	ctx, release, err := a.lock(ctx, p.Platform.Namespace, p.Platform.Name, opts.Holder, opts.LockTTL)
	if err != nil {
		return res, err
	}
	defer release()

	// The parent lists the kinds of its members. Until prune has run it must also list
	// the kinds only the objects to prune have, or a failed run would orphan them
	// (kubectl's ApplySet does the same): the union now, the exact set after prune.
	pruneKinds := deleteKinds(p)
	if c := platformChanges[1]; c.Action != plan.ActionUnchanged || len(pruneKinds) > 0 {
		c.Desired = withKinds(c.Desired, pruneKinds)
		if err := a.applyOne(ctx, c, opts); err != nil {
			return res, &ApplyError{Plane: plan.PlatformPlane, Object: c.Object.String(), Err: err}
		}
		res.Applied++
	}
	if _, err := a.recordStatus(ctx, d, p, opts, nil, true); err != nil {
		return res, err
	}

	applyErr := a.applyPlanes(ctx, d, p, opts, done, res)
	if applyErr == nil && opts.Prune {
		applyErr = a.prune(ctx, p, res)
		if applyErr == nil && len(pruneKinds) > 0 {
			parent := platformChanges[1]
			parent.Desired = d.Platform
			if err := a.applyOne(ctx, parent, opts); err != nil {
				applyErr = &ApplyError{Plane: plan.PlatformPlane, Object: parent.Object.String(), Err: err}
			}
		}
	}
	// The outcome is recorded even when ctx was cancelled (Ctrl-C, a lost lease), so
	// the platform is not left looking Progressing.
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
	a.emit(Event{Type: EventDone, Message: fmt.Sprintf("%d objects written", res.Applied)})
	return res, nil
}

// writes reports whether applying p with opts writes anything: deletes count only when
// prune is on.
func writes(p *plan.Plan, opts Options) bool {
	return p.Summary.Create+p.Summary.Update > 0 || (opts.Prune && p.Summary.Delete > 0)
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

func preflight(p *plan.Plan, opts Options) error {
	if opts.MaxDeletes >= 0 && opts.Prune && p.Summary.Delete > opts.MaxDeletes {
		return fmt.Errorf("the plan deletes %d objects, more than --max-deletes=%d; nothing was written (review it with `kubectl onto plan`)", p.Summary.Delete, opts.MaxDeletes)
	}
	if opts.ForceConflicts {
		return nil
	}
	var conflicted []plan.Change
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			if len(c.Conflicts) > 0 {
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
			if (c.Action == plan.ActionCreate || c.Action == plan.ActionUpdate) && !done[c.Object] {
				writes = append(writes, c)
			}
		}
		a.emit(Event{Type: EventPlaneStarted, Plane: pl.Name, Message: fmt.Sprintf("%d to write", len(writes))})
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(plan.DefaultConcurrency)
		for _, c := range writes {
			g.Go(func() error {
				if err := a.applyOne(gctx, c, opts); err != nil {
					return &ApplyError{Plane: pl.Name, Object: c.Object.String(), Err: err}
				}
				a.emit(Event{Type: EventObjectApplied, Plane: pl.Name, Object: c.Object.String(), Action: c.Action})
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
			return err
		}
		res.Applied += len(writes)
		if opts.Wait {
			if err := a.waitPlane(ctx, d, pl.Name, opts); err != nil {
				a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
				return err
			}
		}
		a.emit(Event{Type: EventPlaneReady, Plane: pl.Name})
	}
	return nil
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
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: a.fieldManager(),
		Force:        &opts.ForceConflicts,
	})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("%w\nanother field manager owns some of these fields: re-run with --force-conflicts to take them over", err)
	}
	return err
}

// waitPlane waits, by watch, until the plane's workloads are ready, and explains from
// their pods why not when the plane timeout passes.
func (a *Applier) waitPlane(ctx context.Context, d *plan.Desired, plane string, opts Options) error {
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
	w := &health.Waiter{Dynamic: a.Clients.Dynamic}
	err := w.Wait(wctx, objs, a.resourceOf, func(u health.Update) {
		a.emit(Event{Type: EventWaiting, Plane: plane, Object: kube.Ref(u.Object), Ready: u.Ready, Message: u.Message})
	})
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

func (a *Applier) resourceOf(obj *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	m, err := a.Clients.Mapping(obj)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return m.Resource, nil
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
