/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// ApplyCRD installs or updates the OntoPlatform CRD (plan.CRD()) when it differs from the
// cluster's, and waits until it is served; it reports whether it wrote. An apply of
// many platforms calls it once before them: their runs, concurrent, then find it
// unchanged, rather than each writing it and resetting the shared RESTMapper under the
// others. Fields of another field manager are refused as Apply refuses them, unless
// opts.ForceConflicts.
func (a *Applier) ApplyCRD(ctx context.Context, crd *unstructured.Unstructured, opts Options) (bool, error) {
	planner := &plan.Planner{Clients: a.Clients, FieldManager: a.FieldManager}
	ch, err := planner.PlanCRD(ctx, crd)
	if err != nil {
		return false, err
	}
	if len(ch.Conflicts) > 0 && !opts.ForceConflicts {
		return false, &ConflictError{Changes: []plan.Change{ch}}
	}
	if ch.Action != plan.ActionCreate && ch.Action != plan.ActionUpdate {
		return false, nil
	}
	// A write, retried through a transient API error as the planes' writes are.
	if err := retryTransient(ctx, opts.RetryBudget, func() error { return a.applyOne(ctx, ch, opts) }); err != nil {
		return false, &ApplyError{Plane: plan.PlatformPlane, Object: ch.Object.String(), Err: err}
	}
	if err := a.waitCRD(ctx, crd.GetName()); err != nil {
		return false, &ApplyError{Plane: plan.PlatformPlane, Object: ch.Object.String(), Err: err}
	}
	a.Clients.Mapper.Reset()
	return true, nil
}
