/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// EventUpgradeStep is the progress event of each step of each component.
const EventUpgradeStep = apply.EventUpgradeStep

// run is one execution of an Upgrade, under its lock.
type run struct {
	u        *Upgrade
	from, to *plan.Desired
	st       *start
	target   *Target
	steps    []string
	moved    map[string]bool
	// noReturn are the components whose migration this upgrade ran and which the
	// previous version cannot run on: never returned by themselves (Job names).
	noReturn map[string]string
}

func (r *run) emit(component, msg string) {
	if r.u.Applier.Observer != nil {
		r.u.Applier.Observer(apply.Event{Type: EventUpgradeStep, Object: component, Message: msg})
	}
}

func (r *run) now() time.Time {
	if r.u.Applier.Now != nil {
		return r.u.Applier.Now()
	}
	return time.Now()
}

// stepOptions are the apply options of one intermediate step.
// stepOptions are the apply options of a step that moves (or returns) component c:
// only c's objects are planned, the rest is as the previous step left it.
func (r *run) stepOptions(c string, planeTimeout time.Duration, wait bool) apply.Options {
	o := r.u.Options.Apply
	o.Action, o.Release, o.Prune, o.Mode = r.u.Options.Action, nil, false, apply.ModeUpgradeStep
	o.Wait = wait
	o.Only = func(obj *unstructured.Unstructured) bool { return componentOf(obj) == c }
	if planeTimeout > 0 {
		o.PlaneTimeout = planeTimeout
	}
	return o
}

func (r *run) execute(ctx context.Context) (*Result, error) {
	u := r.u
	from, to := r.st.from.Spec.Version, r.target.Spec.Version
	res := &Result{From: from, To: to}
	r.moved, r.noReturn = map[string]bool{}, map[string]string{}

	// Resume: a component recorded as done counts only if its workloads run the
	// target's template; a leftover canary goes.
	if r.st.resuming {
		for _, c := range r.st.done {
			if r.runsTarget(ctx, c) {
				r.moved[c] = true
			}
		}
		r.emit("", fmt.Sprintf("resuming the %s %s → %s: %d of %d components already moved", u.Options.Action, from, to, len(r.moved), len(r.steps)))
	}
	if err := r.deleteCanaries(ctx); err != nil {
		return res, err
	}
	if r.st.undo {
		return r.undo(ctx, res)
	}
	if err := r.recordStart(ctx, from, to); err != nil {
		return res, err
	}
	if r.u.Options.Direct && r.target.Revision > 0 {
		return r.direct(ctx, res)
	}

	var movedNow []string
	for _, c := range r.steps {
		if r.moved[c] {
			continue
		}
		if err := r.moveComponent(ctx, c); err != nil {
			// A component moved earlier can fail after its gate (a crash that starts
			// late): the wait of this step then names its workload. It is the one that
			// failed, and returns too.
			failed := []string{c}
			if culprit := r.culprit(err); culprit != "" && culprit != c && r.moved[culprit] {
				failed = append(failed, culprit)
				movedNow = slices.DeleteFunc(movedNow, func(s string) bool { return s == culprit })
			}
			return res, r.fail(ctx, failed, err, movedNow)
		}
		r.moved[c] = true
		movedNow = append(movedNow, c)
		res.Steps = append(res.Steps, c)
		left := len(r.steps) - len(doneList(r.steps, r.moved))
		paused := u.Options.MaxComponents > 0 && len(movedNow) >= u.Options.MaxComponents && left > 0
		if _, err := u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
			if st.Upgrade != nil {
				st.Upgrade.Done, st.Upgrade.Current, st.Upgrade.Step = doneList(r.steps, r.moved), "", ""
				if paused {
					st.Upgrade.Message = fmt.Sprintf("%d of %d components on %s; the next moves at the next pass", len(r.steps)-left, len(r.steps), to)
				}
			}
		}); err != nil {
			return res, err
		}
		if paused {
			r.emit("", fmt.Sprintf("%d of %d components moved; %d left for the next run", len(r.steps)-left, len(r.steps), left))
			res.Paused, res.Remaining = true, left
			return res, nil
		}
	}

	// Every component runs the target: apply it whole (the last plane, the stored spec),
	// prune what it no longer renders (old ConfigMaps, canaries) and record one
	// revision.
	r.setStep(ctx, "", v1alpha1.StepCleanup)
	r.emit("", "every component moved: applying "+to+" whole and pruning what it no longer renders")
	final := u.Options.Apply
	final.Action, final.Release, final.ForceVersion, final.Mode = u.Options.Action, &r.target.Release, true, apply.ModeUpgradeEnd
	final.Prune, final.MaxDeletes = true, -1
	ares, err := u.Applier.Apply(ctx, r.to, final)
	if err != nil {
		return res, fmt.Errorf("%s %s → %s: every component moved, but the final apply failed (run the same command again): %w", u.Options.Action, from, to, err)
	}
	st, err := u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
		st.Upgrade = nil
		if ares.Status != nil && ares.Status.Phase == v1alpha1.PhaseUpgrading {
			st.Phase = v1alpha1.PhaseRunning
		}
		setCondition(st, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "", r.now())
	})
	res.Status = st
	if err == nil {
		r.deleteTarget(ctx)
		r.done(res)
	}
	return res, err
}

// recordStart records the run in status.upgrade (a resume reads it) with the target's
// snapshot, stored before the first write, so a resume and an undo need neither the
// file nor the --releases directory it came from.
func (r *run) recordStart(ctx context.Context, from, to string) error {
	u := r.u
	var targetName string
	if up := r.st.live.Status.Upgrade; up == nil || up.Target == "" {
		name, err := u.Applier.RecordTarget(ctx, r.to.Platform, r.target.Release)
		if err != nil {
			return err
		}
		targetName = name
	}
	started := metav1.NewTime(r.now())
	_, err := u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
		if st.Upgrade == nil {
			st.Upgrade = &v1alpha1.UpgradeStatus{From: from, To: to, StartedAt: &started, FromRevision: r.st.fromRev, Action: u.Options.Action}
		}
		if targetName != "" {
			st.Upgrade.Target = targetName
		}
		// Who drives it now: a CLI run that resumes the watch's upgrade takes it over,
		// and its stop waits for a person.
		st.Upgrade.Driver = u.Options.Driver
		st.Upgrade.Done = doneList(r.steps, r.moved)
		st.Upgrade.FailedComponent, st.Upgrade.Message = "", ""
		st.Phase = v1alpha1.PhaseUpgrading
		setCondition(st, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonUpgrading,
			fmt.Sprintf("%s %s → %s (%s holds the lock)", u.Options.Action, from, to, apply.HolderOf(u.Options.Apply)), r.now())
	})
	return err
}

// direct moves the platform to a revision that already ran Succeeded, without
// canaries: the revision has proven itself, and in an incident nobody waits for a
// soak per component. It applies the target whole, plane by plane (in reverse plane
// order for a rollback: the services go back before the backing services they use),
// each plane's components side by side, waiting for each plane's health before the
// next, and prunes what the target no longer renders. Objects that do not differ are
// not written, so a rollback of a scale touches one workload. A failure stops at its
// plane, recorded; the same command resumes.
func (r *run) direct(ctx context.Context, res *Result) (*Result, error) {
	u := r.u
	from, to := r.st.from.Spec.Version, r.target.Spec.Version
	r.emit("", fmt.Sprintf("%s %s → %s: revision %d ran Succeeded; applying it plane by plane, no canary", u.Options.Action, from, to, r.target.Revision))
	final := u.Options.Apply
	final.Action, final.Release, final.ForceVersion, final.Mode = u.Options.Action, &r.target.Release, true, apply.ModeUpgradeEnd
	final.Prune, final.MaxDeletes = true, -1
	d := r.to
	if u.Reverse {
		d = reversePlanes(d)
	}
	ares, err := u.Applier.Apply(ctx, d, final)
	if err != nil {
		return res, fmt.Errorf("%s %s → %s: %w (run the same command again to resume)", u.Options.Action, from, to, err)
	}
	res.Steps = slices.Clone(r.steps)
	st, err := u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
		st.Upgrade = nil
		if ares.Status != nil && ares.Status.Phase == v1alpha1.PhaseUpgrading {
			st.Phase = v1alpha1.PhaseRunning
		}
		setCondition(st, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "", r.now())
	})
	res.Status = st
	if err == nil {
		r.deleteTarget(ctx)
		r.done(res)
	}
	return res, err
}

// reversePlanes is d with its workload planes in reverse order; tenancy (namespace,
// quota, policies) stays first, since every other plane lives in what it sets up.
func reversePlanes(d *plan.Desired) *plan.Desired {
	out := *d
	out.Planes = nil
	var rest []render.Plane
	for _, pl := range d.Planes {
		if pl.Name == firstPlane {
			out.Planes = append(out.Planes, pl)
			continue
		}
		rest = append(rest, pl)
	}
	slices.Reverse(rest)
	out.Planes = append(out.Planes, rest...)
	return &out
}

// moveComponent moves component c to the target: canary and soak for its
// Deployments, partitioned update and soak for its StatefulSets, then the rollout.
func (r *run) moveComponent(ctx context.Context, c string) error {
	u := r.u
	targets := workloadsOf(r.to, c)
	olds := workloadsOf(r.from, c)
	if m := r.migrationOf(c); m != nil {
		r.setStep(ctx, c, v1alpha1.StepMigrate)
		if err := r.migrate(ctx, c, m); err != nil {
			return err
		}
		if !m.BackwardCompatible {
			r.noReturn[c] = migrationJobName(c, r.target.Spec.Version)
		}
	}
	r.setStep(ctx, c, v1alpha1.StepCanary)

	var canaries []*unstructured.Unstructured
	var shrunk []*unstructured.Unstructured
	var sts []*unstructured.Unstructured
	for _, w := range targets {
		switch w.GetKind() {
		case health.KindDeployment:
			if len(olds) == 0 {
				continue // a new component: nothing to compare a canary with
			}
			canaries = append(canaries, canaryOf(w))
			if noSurge(w) {
				// No room for one more pod of this kind: the canary takes an old pod's place.
				for _, o := range olds {
					if n, ok := replicasOf(o); ok && o.GetName() == w.GetName() && n > 1 {
						shrunk = append(shrunk, withReplicas(o, n-1))
					}
				}
			}
		case health.KindStatefulSet:
			sts = append(sts, w)
		}
	}

	if len(canaries) > 0 && len(shrunk) > 0 {
		// Room first: a terminating pod still holds its GPUs, so a canary started
		// with the shrink would wait, unschedulable, for the pod it replaces to go.
		r.emit(c, "making room for the canary: one old pod fewer (maxSurge 0)")
		if _, err := u.Applier.Apply(ctx, replace(mix(r.from, r.to, r.moved), shrunk...), r.stepOptions(c, u.Options.CanaryTimeout, true)); err != nil {
			return fmt.Errorf("make room for the canary: %w", err)
		}
		for _, s := range shrunk {
			if err := r.waitTerminated(ctx, s, u.Options.CanaryTimeout); err != nil {
				return fmt.Errorf("make room for the canary: %w", err)
			}
		}
	}
	if len(canaries) > 0 {
		r.emit(c, fmt.Sprintf("canary: 1 pod of %s beside the running ones (gets ~1/(n+1) of the Service's requests)", r.target.Spec.Version))
		// The component's other target objects (its new ConfigMap, Service, account)
		// go in with the canary; its workloads stay as they are.
		d := replace(mix(r.from, r.to, r.moved, canaries...), shrunk...)
		d = r.withTargetSupport(d, c)
		if _, err := u.Applier.Apply(ctx, d, r.stepOptions(c, u.Options.CanaryTimeout, true)); err != nil {
			return fmt.Errorf("canary: %w", err)
		}
		r.setStep(ctx, c, v1alpha1.StepSoak)
		for _, cn := range canaries {
			if err := r.soak(ctx, c, cn, cn.GetName(), canarySelector(cn)); err != nil {
				return err
			}
		}
	}
	if len(sts) > 0 {
		// The highest ordinal first, as a canary that is part of the set.
		var parted []*unstructured.Unstructured
		for _, s := range sts {
			if n, _ := replicasOf(s); n > 1 {
				parted = append(parted, withPartition(s, n-1))
			}
		}
		moved := withMoved(r.moved, c)
		if len(parted) > 0 {
			r.emit(c, "updating the highest ordinal first (partition)")
			if _, err := u.Applier.Apply(ctx, replace(mix(r.from, r.to, moved), parted...), r.stepOptions(c, u.Options.CanaryTimeout, true)); err != nil {
				return fmt.Errorf("first pod: %w", err)
			}
		}
		r.setStep(ctx, c, v1alpha1.StepSoak)
		for _, s := range sts {
			if n, _ := replicasOf(s); n > 1 {
				top := fmt.Sprintf("%s-%d", s.GetName(), n-1)
				if err := r.soak(ctx, c, s, top, "metadata.name="+top); err != nil {
					return err
				}
			}
		}
	}

	// A canary that took an old pod's place (maxSurge 0) gives it back before the
	// rollout: the rollout's new pods need that room (GPUs), and would wait for it
	// until the plane timeout while the canary holds it.
	for _, cn := range canaries {
		if noSurge(cn) {
			if err := r.deleteObject(ctx, cn); err != nil {
				return err
			}
		}
	}
	r.setStep(ctx, c, v1alpha1.StepRollout)
	r.emit(c, "rolling out "+r.target.Spec.Version)
	if _, err := u.Applier.Apply(ctx, mix(r.from, r.to, withMoved(r.moved, c)), r.stepOptions(c, 0, true)); err != nil {
		return fmt.Errorf("rollout: %w", err)
	}
	// A StatefulSet of one pod has no ordinal to try first: its pod is soaked once
	// it runs the new version.
	for _, s := range sts {
		if n, _ := replicasOf(s); n == 1 {
			if err := r.soak(ctx, c, s, s.GetName()+"-0", "metadata.name="+s.GetName()+"-0"); err != nil {
				return err
			}
		}
	}
	for _, cn := range canaries {
		if err := r.deleteObject(ctx, cn); err != nil {
			return err
		}
	}
	r.emit(c, "✓ on "+r.target.Spec.Version)
	return nil
}

// withTargetSupport puts the target's non-workload objects of component c into d
// (its ConfigMap under a new name, Service, ServiceAccount), keeping the workloads.
func (r *run) withTargetSupport(d *plan.Desired, c string) *plan.Desired {
	out := *d
	out.Planes = nil
	for _, pl := range d.Planes {
		objs := slices.Clone(pl.Objects)
		for _, o := range planeObjects(r.to, pl.Name) {
			if componentOf(o) != c || health.IsWorkload(o) || o.GetKind() == "HorizontalPodAutoscaler" || o.GetKind() == "PodDisruptionBudget" {
				continue
			}
			idx := slices.IndexFunc(objs, func(x *unstructured.Unstructured) bool {
				return x.GetKind() == o.GetKind() && x.GetName() == o.GetName()
			})
			if idx >= 0 {
				objs[idx] = o
			} else {
				objs = append(objs, o)
			}
		}
		out.Planes = append(out.Planes, render.Plane{Name: pl.Name, Objects: objs})
	}
	return &out
}

func withMoved(moved map[string]bool, c string) map[string]bool {
	m := map[string]bool{c: true}
	for k, v := range moved {
		m[k] = v
	}
	return m
}

func doneList(steps []string, moved map[string]bool) []string {
	var out []string
	for _, s := range steps {
		if moved[s] {
			out = append(out, s)
		}
	}
	return out
}

// setStep records where the upgrade is; a failure to record is logged, not fatal:
// the next step records again.
func (r *run) setStep(ctx context.Context, c string, step v1alpha1.UpgradeStep) {
	if _, err := r.u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
		if st.Upgrade != nil {
			st.Upgrade.Current, st.Upgrade.Step = c, step
		}
	}); err != nil && r.u.Applier.Log != nil {
		r.u.Applier.Log.Warn("record upgrade step", "component", c, "step", step, "err", err)
	}
}

// culprit is the component whose workload err names (the wait of a step failed on
// it), or "".
func (r *run) culprit(err error) string {
	var ae *apply.ApplyError
	if !errors.As(err, &ae) {
		return ""
	}
	_, name, ok := strings.Cut(ae.Object, "/")
	if !ok {
		return ""
	}
	for _, w := range r.to.Objects() {
		if health.IsWorkload(w) && w.GetName() == name {
			return componentOf(w)
		}
	}
	return ""
}

// fail returns the failed components (the current one first, and one moved earlier
// that failed after its gate) to their start objects, records the failure and, with
// Atomic, returns every component this run moved.
func (r *run) fail(ctx context.Context, failed []string, cause error, movedNow []string) error {
	u := r.u
	c := failed[len(failed)-1]
	if ctx.Err() != nil {
		// Interrupted or the lock was lost: leave the state for a resume.
		return cause
	}
	r.setStep(ctx, failed[0], v1alpha1.StepRollingBack)
	r.emit(c, "✗ "+cause.Error()+": returning "+strings.Join(failed, " and ")+" to "+r.st.from.Spec.Version)
	// The broken one first, so the wait of the other's return does not fail on it.
	// A component whose data was migrated in a way its old version cannot read stays.
	back := slices.Clone(failed)
	slices.Reverse(back)
	var kept []string
	back = slices.DeleteFunc(back, func(x string) bool {
		if job, ok := r.noReturn[x]; ok {
			kept = append(kept, fmt.Sprintf("%s (migration %s is not backward compatible)", x, job))
			return true
		}
		return false
	})
	var forwardErr error
	if len(kept) > 0 {
		// Its old version cannot read the migrated data: it stays on (or, when its
		// canary failed, goes to) the target, without waiting for health.
		r.emit(c, "not returning "+strings.Join(kept, ", ")+": the way out is forward, a fixed release, or a restore of its data")
		for x := range r.noReturn {
			if slices.Contains(failed, x) {
				r.moved[x] = true
			}
		}
		forwardErr = r.deleteCanariesOf(ctx, "")
		forward := r.stepOptions("", 0, false)
		forward.Only = nil
		if _, err := u.Applier.Apply(ctx, mix(r.from, r.to, r.moved), forward); err != nil {
			forwardErr = errors.Join(forwardErr, err)
		}
	}
	// Beside a kept component that does not become healthy, the others' return is not
	// waited for: the wait would fail on it.
	rollbackErr := errors.Join(forwardErr, r.returnComponents(ctx, back, len(kept) == 0))
	compErr := &ComponentError{Component: c, RolledBack: rollbackErr == nil && len(kept) == 0, Err: cause, Kept: kept}
	msg := compErr.Error()
	result := v1alpha1.RevisionFailed
	clear := false
	if u.Options.Atomic && rollbackErr == nil && len(kept) == 0 {
		back := slices.Clone(movedNow)
		slices.Reverse(back)
		if stays := slices.IndexFunc(back, func(x string) bool { _, ok := r.noReturn[x]; return ok }); stays >= 0 {
			// Returning the rest would leave a platform of two versions for good.
			rollbackErr = fmt.Errorf("--atomic: %s cannot be returned (migration %s is not backward compatible); the components stay as they are", back[stays], r.noReturn[back[stays]])
			back = nil
		}
		r.emit("", fmt.Sprintf("--atomic: returning %d moved components to %s", len(back), r.st.from.Spec.Version))
		if err := r.returnComponents(ctx, back, true); err != nil {
			rollbackErr = err
		} else {
			final := u.Options.Apply
			final.Action, final.Release, final.ForceVersion, final.Mode = u.Options.Action, nil, true, apply.ModeUpgradeStep
			final.Prune, final.MaxDeletes = true, -1
			if _, err := u.Applier.Apply(ctx, r.from, final); err != nil {
				rollbackErr = err
			} else {
				result, clear = v1alpha1.RevisionRolledBack, true
				msg += fmt.Sprintf("; --atomic returned every component to %s", r.st.from.Spec.Version)
			}
		}
	}
	if rollbackErr != nil {
		msg += "; rollback: " + rollbackErr.Error()
	}
	now := r.now()
	if _, err := u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
		if clear {
			st.Upgrade = nil
		} else if st.Upgrade != nil {
			st.Upgrade.FailedComponent, st.Upgrade.Message, st.Upgrade.Current, st.Upgrade.Step = c, msg, failed[0], ""
			st.Upgrade.Done = doneList(r.steps, r.moved)
		}
		if clear {
			// Every component is back and healthy (the final apply waited for it).
			st.Phase = v1alpha1.PhaseRunning
			setCondition(st, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonRolledBack, msg, now)
			setCondition(st, v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonRolledBack, msg, now)
		} else {
			st.Phase = v1alpha1.PhaseDegraded
			setCondition(st, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonUpgradeFailed, msg, now)
			setCondition(st, v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonUpgradeFailed, msg, now)
		}
		st.History = appendHistory(st.History, v1alpha1.Revision{Version: r.target.Spec.Version, Time: metav1.NewTime(now),
			Result: result, Action: u.Options.Action, Message: msg})
	}); err != nil {
		return errors.Join(compErr, err)
	}
	if clear {
		r.deleteTarget(ctx)
	}
	if rollbackErr != nil {
		return errors.Join(compErr, rollbackErr)
	}
	return compErr
}

// returnComponents puts components cs back on their start objects, one by one, and
// waits until they are healthy. A StatefulSet's pods on the failed revision that are
// not ready are deleted: under OrderedReady a reverted template does not replace a
// broken pod by itself. Volumes are untouched.
func (r *run) returnComponents(ctx context.Context, cs []string, wait bool) error {
	u := r.u
	for _, c := range cs {
		delete(r.moved, c)
		if err := r.deleteCanariesOf(ctx, c); err != nil {
			return err
		}
		d := mix(r.from, r.to, r.moved)
		if _, err := u.Applier.Apply(ctx, d, r.stepOptions(c, 0, false)); err != nil {
			return fmt.Errorf("return %s: %w", c, err)
		}
		for _, s := range workloadsOf(r.from, c) {
			if s.GetKind() == health.KindStatefulSet {
				if err := r.deleteBrokenPods(ctx, s); err != nil {
					return err
				}
			}
		}
		if _, err := u.Applier.Apply(ctx, d, r.stepOptions(c, 0, wait)); err != nil {
			return fmt.Errorf("return %s: %w", c, err)
		}
	}
	return nil
}

// done says the run is over, with the phase it recorded last: the steps' own applies
// say nothing of it (their status still says Upgrading).
func (r *run) done(res *Result) {
	if r.u.Applier.Observer == nil || res.Status == nil {
		return
	}
	r.u.Applier.Observer(apply.Event{Type: apply.EventDone,
		Message: fmt.Sprintf("%s %s → %s, %d components moved", r.u.Options.Action, res.From, res.To, len(res.Steps)),
		Phase:   string(res.Status.Phase), Version: res.Status.Version, ReadyComponents: res.Status.ReadyComponents})
}

// deleteTarget removes the target snapshot of a run that ended; one left behind is
// only logged: the next upgrade writes its own over it.
func (r *run) deleteTarget(ctx context.Context) {
	if err := r.u.Applier.DeleteTarget(ctx, r.u.Namespace, r.u.Name); err != nil && r.u.Applier.Log != nil {
		r.u.Applier.Log.Warn("delete the upgrade's target snapshot", "err", err)
	}
}

// appendHistory adds rev numbered after the newest, keeping MaxHistory.
func appendHistory(h []v1alpha1.Revision, rev v1alpha1.Revision) []v1alpha1.Revision {
	var n int64
	for _, x := range h {
		n = max(n, x.Revision)
	}
	rev.Revision = n + 1
	h = append(h, rev)
	if len(h) > v1alpha1.MaxHistory {
		h = h[len(h)-v1alpha1.MaxHistory:]
	}
	return h
}

// undo returns the components a stopped upgrade moved, newest first, then applies the
// revision it started from whole and records it as a rollback.
func (r *run) undo(ctx context.Context, res *Result) (*Result, error) {
	u := r.u
	// Newest first: the reverse of the order the upgrade moved them in (plane
	// order), whatever order this run's own steps are in (a rollback's are reversed).
	back := doneList(Steps(r.to, r.from, componentOrder(r.st), false), r.moved)
	slices.Reverse(back)
	res.From, res.To = r.target.Spec.Version, r.st.from.Spec.Version
	returned := back
	// The component the upgrade stopped at may be half moved: it goes back first. One
	// that failed was already returned by the failed run; it is applied again, as
	// cheap as a no-op, but not counted as moved.
	if up := r.st.live.Status.Upgrade; up != nil && up.Current != "" && !slices.Contains(back, up.Current) {
		returned = append([]string{up.Current}, back...)
		if up.FailedComponent != up.Current {
			back = returned
		}
	}
	r.emit("", fmt.Sprintf("undoing the stopped upgrade to %s: returning %d moved components to %s", r.target.Spec.Version, len(back), r.st.from.Spec.Version))
	r.setStep(ctx, "", v1alpha1.StepRollingBack)
	if err := r.returnComponents(ctx, returned, true); err != nil {
		return res, err
	}
	res.Steps = back
	final := u.Options.Apply
	final.Action, final.Release, final.ForceVersion, final.Mode = "rollback", &r.st.from.Release, true, apply.ModeUpgradeEnd
	final.Prune, final.MaxDeletes = true, -1
	ares, err := u.Applier.Apply(ctx, r.from, final)
	if err != nil {
		return res, fmt.Errorf("undo the upgrade: the components are back, but the final apply failed (run the same command again): %w", err)
	}
	st, err := u.updateStatus(ctx, func(st *v1alpha1.OntoPlatformStatus) {
		st.Upgrade = nil
		if ares.Status != nil && ares.Status.Phase == v1alpha1.PhaseUpgrading {
			st.Phase = v1alpha1.PhaseRunning
		}
		setCondition(st, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "", r.now())
	})
	res.Status = st
	if err == nil {
		r.deleteTarget(ctx)
		r.done(res)
	}
	return res, err
}
