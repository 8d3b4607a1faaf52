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
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// crdEstablishTimeout bounds the wait for the API server to serve a new CRD.
const crdEstablishTimeout = time.Minute

// recordStatus computes the OntoPlatform's status from the live workloads and writes it
// when it differs from what is stored. starting marks the beginning of a run
// (Progressing); applyErr is how the run ended; observed, when not nil, is the
// components as the run's last health check saw them, read instead of read again.
func (a *Applier) recordStatus(ctx context.Context, d *plan.Desired, p *plan.Plan, opts Options, applyErr error, starting bool, observed []v1alpha1.ComponentStatus) (*v1alpha1.OntoPlatformStatus, error) {
	ri, err := a.Clients.Resource(d.Platform)
	if err != nil {
		return nil, err
	}
	live, err := ri.Get(ctx, d.Platform.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // not stored (a dry run, or the parent was never applied)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", p.Platform, err)
	}
	var current v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &current); err != nil {
		return nil, fmt.Errorf("decode %s: %w", p.Platform, err)
	}
	next := *current.Status.DeepCopy()
	now := metav1.NewTime(a.now())
	generation := current.Generation
	if opts.Generation > 0 {
		generation = opts.Generation
	}
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&next.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: msg, ObservedGeneration: generation, LastTransitionTime: now})
	}

	if starting {
		switch {
		case next.Version == "":
			next.Phase = v1alpha1.PhaseInstalling
		case next.Version != d.Version:
			next.Phase = v1alpha1.PhaseUpgrading
		}
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonApplying, fmt.Sprintf("applying version %s (%s holds the lock)", d.Version, HolderOf(opts)))
		next.SyncConditions(generation, now)
		return a.writeStatus(ctx, live, current.Status, next)
	}

	// The workloads and their autoscalers: the same readiness rules as `status`.
	comps := observed
	if comps == nil {
		if comps, err = health.ObserveComponents(ctx, a.Clients, d.Objects()); err != nil {
			return nil, err
		}
	}
	next.Components = comps
	ready, total := health.CountReady(comps)
	next.ReadyComponents = fmt.Sprintf("%d/%d", ready, total)
	set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "")
	var planeNotReady *PlaneNotReadyError
	var interrupted *InterruptedError
	switch {
	case errors.As(applyErr, &interrupted):
		// Stopped by its caller, not failed: nothing says the platform is broken,
		// only that this run did not finish.
		next.Phase = v1alpha1.PhaseError
		msg := fmt.Sprintf("the run applying version %s was interrupted (%v) with %d/%d components ready; run apply again to finish", d.Version, interrupted.Err, ready, total)
		set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonInterrupted, msg)
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInterrupted, msg)
		set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonInterrupted, msg)
	case errors.As(applyErr, &planeNotReady):
		// A reconciler's run that stopped at a plane still rolling out: progress, not
		// a failure; the reconciler comes back.
		if next.Version == "" {
			next.Phase = v1alpha1.PhaseInstalling
		}
		msg := fmt.Sprintf("%d/%d components ready; %s", ready, total, planeNotReady.Error())
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingOut, msg)
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonRollingOut, msg)
	case applyErr == nil && ready < total && !opts.Wait && writes(p, opts):
		// Not waited for: pods still starting are a rollout in progress, not a failure.
		if next.Version == "" {
			next.Phase = v1alpha1.PhaseInstalling
		}
		msg := fmt.Sprintf("%d/%d components ready; not waited for (--wait=false)", ready, total)
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingOut, msg)
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonRollingOut, msg)
	case applyErr != nil:
		next.Phase = v1alpha1.PhaseError
		// One line: a ModeReconcile run's errors are joined, one per object it could
		// not write.
		msg := strings.ReplaceAll(applyErr.Error(), "\n", "; ")
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonApplyFailed, msg)
		set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonApplyFailed, msg)
	case ready < total:
		next.Phase = v1alpha1.PhaseDegraded
		msg := notReadyMessage(comps)
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonComponentsFailed, msg)
		set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonComponentsFailed, msg)
	default:
		next.Phase = v1alpha1.PhaseRunning
		next.Version = d.Version
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonComponentsReady, fmt.Sprintf("%d/%d components ready", ready, total))
		set(v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonComponentsReady, "")
		if opts.Degraded != nil {
			// Healthy workloads, but something the caller knows about is not (the
			// watch's drift fight).
			set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, opts.Degraded.Reason, opts.Degraded.Message)
		}
	}
	if u := next.Upgrade; u != nil && next.Phase == v1alpha1.PhaseRunning {
		// Healthy between two steps of an upgrade: it is still upgrading.
		next.Phase = v1alpha1.PhaseUpgrading
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonUpgrading, fmt.Sprintf("upgrading %s → %s", u.From, u.To))
	}
	// A revision is every run that wrote, and a run that wrote nothing but found the
	// spec healthy for the first time (after a run that was killed, or failed, once
	// its objects were written): its spec is then installed, and rollback needs it.
	// A failed run records its generation as observed too (kstatus reads Stalled only
	// then), so "for the first time" is also "after a run of this generation failed".
	converged := applyErr == nil && next.Phase == v1alpha1.PhaseRunning &&
		(current.Status.ObservedGeneration != generation || runFailedAt(current.Status, generation))
	record := writes(p, opts) || converged
	if opts.Mode == ModeReconcile {
		// A reconciler's repairs of drift are not revisions; a changed spec is, once
		// it converged.
		record = converged
	}
	if record && opts.Mode != ModeUpgradeStep {
		rev := v1alpha1.Revision{Version: d.Version, Time: now, Action: opts.Action,
			Result: resultOf(applyErr), Message: errMessage(applyErr)}
		// A successful revision keeps what it was rendered from (spec with patches,
		// release entry), so later runs can render it again without the file.
		if applyErr == nil && opts.Release != nil {
			n := nextRevision(next.History)
			name, err := a.recordRevision(ctx, d, opts.Release, n)
			rev.Snapshot = name
			if err != nil {
				// The platform is applied; only what rollback needs is missing. Say so
				// rather than fail a run whose objects are all in place.
				a.logger().Warn("revision snapshot not recorded", "revision", n, "err", err)
				a.emit(Event{Type: EventWarning, Message: fmt.Sprintf("revision %d: snapshot not recorded: %v", n, err)})
			}
		}
		next.History = appendRevision(next.History, rev)
	}
	next.SyncConditions(generation, now)
	return a.writeStatus(ctx, live, current.Status, next)
}

// runFailedAt reports whether st records a run of generation that failed or was
// stopped (Ready=False for that reason), as opposed to components that stopped being
// ready after their spec had converged: only the first makes the next healthy run a
// revision, so a flapping pod does not fill the history.
func runFailedAt(st v1alpha1.OntoPlatformStatus, generation int64) bool {
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != generation {
		return false
	}
	switch c.Reason {
	case v1alpha1.ReasonApplyFailed, v1alpha1.ReasonInterrupted, v1alpha1.ReasonUpgradeFailed:
		return true
	}
	return false
}

// HolderOf is the name a run with opts holds the platform's lock under: the status
// of a run in flight names it, as the lock's Lease does.
func HolderOf(opts Options) string {
	if opts.Holder != "" {
		return opts.Holder
	}
	return DefaultHolder()
}

func (a *Applier) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func notReadyMessage(comps []v1alpha1.ComponentStatus) string {
	for _, c := range comps {
		if !c.Ready {
			return fmt.Sprintf("%s: %d/%d ready: %s", c.Name, c.ReadyReplicas, c.DesiredReplicas, c.Message)
		}
	}
	return ""
}

func resultOf(err error) v1alpha1.RevisionResult {
	var interrupted *InterruptedError
	if errors.As(err, &interrupted) {
		return v1alpha1.RevisionInterrupted
	}
	if err != nil {
		return v1alpha1.RevisionFailed
	}
	return v1alpha1.RevisionSucceeded
}

func errMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// nextRevision is the number the next revision of history h gets.
func nextRevision(h []v1alpha1.Revision) int64 {
	if len(h) == 0 {
		return 1
	}
	return h[len(h)-1].Revision + 1
}

// appendRevision adds r with the next revision number, keeping the newest MaxHistory.
func appendRevision(h []v1alpha1.Revision, r v1alpha1.Revision) []v1alpha1.Revision {
	r.Revision = nextRevision(h)
	h = append(h, r)
	if len(h) > v1alpha1.MaxHistory {
		h = h[len(h)-v1alpha1.MaxHistory:]
	}
	return h
}

// writeStatus writes next with a server-side apply of the status subresource, unless it
// equals old: an unchanged platform gets no write.
func (a *Applier) writeStatus(ctx context.Context, live *unstructured.Unstructured, old, next v1alpha1.OntoPlatformStatus) (*v1alpha1.OntoPlatformStatus, error) {
	if reflect.DeepEqual(old, next) {
		return &next, nil
	}
	patch := map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       v1alpha1.Kind,
		"metadata":   map[string]any{"name": live.GetName(), "namespace": live.GetNamespace()},
		"status":     next,
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	ri, err := a.Clients.Resource(live)
	if err != nil {
		return nil, err
	}
	force := true
	if _, err := ri.Patch(ctx, live.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: a.fieldManager(), Force: &force}, "status"); err != nil {
		return nil, fmt.Errorf("write status of %s/%s: %w", live.GetNamespace(), live.GetName(), err)
	}
	return &next, nil
}

// waitCRD waits, by watch, until the API server serves the CRD (Established).
func (a *Applier) waitCRD(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, crdEstablishTimeout)
	defer cancel()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	gvr, err := a.Clients.GVR(crd)
	if err != nil {
		return err
	}
	ri := a.Clients.Dynamic.Resource(gvr)
	lw := kube.ListWatch(ri, "metadata.name="+name)
	_, err = watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// RecordRolledOut finishes the status of a run that did not wait (--wait=false) once
// its platform is healthy: `status --wait` calls it after its wait succeeded, with the
// components it counted ready ("ready/total"). It writes only when the stored status
// still records that run's rollout of the stored spec (Progressing=True, RollingOut,
// for the current generation), and only over the status as read: a run that started
// meanwhile changes the status first and wins. It reports whether it wrote.
func RecordRolledOut(ctx context.Context, clients *kube.Clients, namespace, name, readyComponents string, now time.Time) (bool, error) {
	ref := &unstructured.Unstructured{}
	ref.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.Kind))
	ref.SetNamespace(namespace)
	ri, err := clients.Resource(ref)
	if err != nil {
		return false, err
	}
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get OntoPlatform %s/%s: %w", namespace, name, err)
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &p); err != nil {
		return false, fmt.Errorf("decode OntoPlatform %s/%s: %w", namespace, name, err)
	}
	c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionProgressing)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonRollingOut || c.ObservedGeneration != p.Generation {
		return false, nil
	}
	at := metav1.NewTime(now)
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: msg, ObservedGeneration: p.Generation, LastTransitionTime: at})
	}
	msg := readyComponents + " components ready"
	p.Status.Phase, p.Status.Version, p.Status.ReadyComponents = v1alpha1.PhaseRunning, p.Spec.Version, readyComponents
	set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "")
	set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonComponentsReady, msg)
	set(v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonComponentsReady, "")
	p.Status.SyncConditions(p.Generation, at)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p)
	if err != nil {
		return false, err
	}
	// An update, not an apply: it carries the resourceVersion read above, so it fails
	// rather than overwrite what a run wrote since.
	if _, err := ri.UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{FieldManager: plan.FieldManager}); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return false, fmt.Errorf("record the rollout in OntoPlatform %s/%s's status: %w", namespace, name, err)
	}
	return true, nil
}
