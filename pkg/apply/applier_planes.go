/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// applyPlanes applies each plane's creates and updates, except those already done,
// then waits for the plane's workloads.
//
// A ModeReconcile run (the watch) writes every object it can: an object the API server
// refuses does not stop the others, in its wave, its plane or the planes after; the
// refusals come back together at the end, so the status can name each.
func (a *Applier) applyPlanes(ctx context.Context, d *plan.Desired, p *plan.Plan, opts Options, done map[plan.ObjectRef]bool, res *Result) error {
	var refused []error
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
			n, err := a.applyWave(ctx, pl.Name, wave, opts)
			res.Applied += n
			if err != nil && opts.Mode == ModeReconcile && ctx.Err() == nil {
				a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
				refused = append(refused, err)
				continue
			}
			if err != nil {
				a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
				return err
			}
		}
		if opts.Mode == ModeReconcile {
			if _, err := a.checkReady(ctx, d, pl.Name, nil); err != nil {
				return errors.Join(append(refused, err)...)
			}
		} else if opts.Wait {
			// The next plane needs this one serving its new spec (health.Serving); the
			// rest of each rollout and Available (minReadySeconds) are waited for once,
			// for every plane, by the health check after the planes.
			if err := a.waitPlane(ctx, d, pl.Name, opts, health.Serving, false); err != nil {
				a.emit(Event{Type: EventPlaneFailed, Plane: pl.Name, Message: err.Error()})
				return err
			}
		}
		a.emit(Event{Type: EventPlaneReady, Plane: pl.Name})
	}
	return errors.Join(refused...)
}

// applyWave writes changes concurrently and returns how many it wrote. It stops at
// the first error, except in a ModeReconcile run, which writes every change it can and
// returns every refusal.
func (a *Applier) applyWave(ctx context.Context, plane string, wave []plan.Change, opts Options) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(plan.DefaultConcurrency)
	var mu sync.Mutex
	var written int
	var refused []error
	for _, c := range wave {
		g.Go(func() error {
			write := a.applyOne
			if c.Action == plan.ActionReplace {
				write = a.replace
			}
			if err := retryTransient(gctx, opts.RetryBudget, func() error { return write(gctx, c, opts) }); err != nil {
				err = &ApplyError{Plane: plane, Object: c.Object.String(), Err: err}
				if opts.Mode != ModeReconcile {
					return err
				}
				mu.Lock()
				refused = append(refused, err)
				mu.Unlock()
				return nil
			}
			mu.Lock()
			written++
			mu.Unlock()
			a.emit(Event{Type: EventObjectApplied, Plane: plane, Object: c.Object.String(), Action: c.Action, Ref: &c.Object})
			return nil
		})
	}
	err := g.Wait()
	return written, errors.Join(append(refused, err)...)
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
// create with fresh random values, or for a certificate Secret one issued in place.
func (a *Applier) applyOne(ctx context.Context, c plan.Change, opts Options) error {
	obj := c.Desired
	if obj == nil {
		return errors.New("the plan holds no object to apply")
	}
	if plan.IsGenerated(obj) {
		return a.createGeneratedSecret(ctx, obj)
	}
	if plan.IsCertificate(obj) {
		return a.issueCertificate(ctx, obj)
	}
	ri, err := a.Clients.Resource(obj)
	if err != nil {
		return err
	}
	if opts.preconditions() && c.ResourceVersion != "" {
		obj = obj.DeepCopy()
		obj.SetResourceVersion(c.ResourceVersion)
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	if len(c.ReplaceLists) > 0 {
		if err := a.replaceLists(ctx, ri, c); err != nil {
			return err
		}
	}
	force := opts.ForceConflicts || len(c.TakeOver) > 0
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: a.fieldManager(),
		Force:        &force,
	})
	switch {
	case isFieldManagerConflict(err):
		return fmt.Errorf("%w\nanother field manager owns some of these fields: re-run with --force-conflicts to take them over", err)
	case apierrors.IsConflict(err) && opts.preconditions():
		return fmt.Errorf("it changed in the cluster since the saved plan was made (%w): make a new plan, review it and apply that", err)
	}
	return err
}

// replaceLists sets the lists c.ReplaceLists names ("spec.ports") to the rendered
// items with a merge patch, which replaces a list whole, over the object as planned
// (its resourceVersion): items of another manager that server-side apply cannot
// remove go, and the apply that follows owns the rendered ones.
func (a *Applier) replaceLists(ctx context.Context, ri dynamic.ResourceInterface, c plan.Change) error {
	patch := map[string]any{}
	if c.ResourceVersion != "" {
		patch["metadata"] = map[string]any{"resourceVersion": c.ResourceVersion}
	}
	for _, path := range c.ReplaceLists {
		fields := strings.Split(path, ".")
		v, _, err := unstructured.NestedFieldNoCopy(c.Desired.Object, fields...)
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(patch, v, fields...); err != nil {
			return err
		}
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, c.Desired.GetName(), types.MergePatchType, data, metav1.PatchOptions{FieldManager: a.fieldManager()}); err != nil {
		return fmt.Errorf("set %s to the rendered items: %w", strings.Join(c.ReplaceLists, ", "), err)
	}
	return nil
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

// waitPlane waits, by watch, until the plane's workloads are ready by check (kstatus's
// rules when nil) and its Jobs have completed, reporting pod problems as they appear.
// It stops early when a new pod crash-loops, and explains from the pods why a workload
// is not ready when the plane timeout passes. quiet leaves out the workloads that are
// ready from the start (a run with nothing to write).
func (a *Applier) waitPlane(ctx context.Context, d *plan.Desired, plane string, opts Options, check func(*unstructured.Unstructured) health.Ready, quiet bool) error {
	var objs []*unstructured.Unstructured
	for _, pl := range d.Planes {
		if string(pl.Name) == plane {
			objs = pl.Objects
		}
	}
	if !slices.ContainsFunc(objs, health.IsWaitedFor) {
		return nil
	}
	timeout := opts.PlaneTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := &health.Waiter{Dynamic: a.Clients.Dynamic, Check: check, WatchPods: true, CrashLoopRestarts: opts.CrashLoopRestarts}
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
	var failed *health.FailedError
	if errors.As(err, &failed) {
		why := failed.Message
		if explained, xerr := health.Explain(ctx, a.Clients.Kube, failed.Workload); xerr == nil && explained != "" {
			why += " (" + explained + ")"
		}
		return &ApplyError{Plane: plane, Object: kube.Ref(failed.Workload), Err: fmt.Errorf("failed: %s; stopped without waiting out --plane-timeout", why)}
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
func (a *Applier) prune(ctx context.Context, p *plan.Plan, opts Options, res *Result) error {
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
			err = retryTransient(ctx, opts.RetryBudget, func() error { return ri.Delete(ctx, c.Object.Name, del) })
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
