/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"fmt"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
)

// Pending is an apply that is an upgrade.
type Pending struct {
	// Installed is the version the platform runs (status.version).
	Installed string
	// Resuming: an upgrade to the file's version is recorded, stopped or failed.
	Resuming bool
	Upgrade  *Upgrade
}

// ForApply returns the upgrade that applying lp over live (the installed platform, nil
// when there is none) is, nil when it is a plain apply. It is one when the platform
// runs another version than lp's spec.version, or when an upgrade to it stopped: a new
// version of an installed platform moves component by component behind canaries, as
// `kubectl onto upgrade -f` does, not every plane at once. The upgrade writes with a.
func ForApply(a *apply.Applier, live *v1alpha1.OntoPlatform, lp platform.Loaded, opts Options) *Pending {
	if live == nil || live.Status.Version == "" {
		return nil
	}
	installed, upgradingTo := live.Status.Version, ""
	if live.Status.Upgrade != nil {
		upgradingTo = live.Status.Upgrade.To
	}
	to := lp.Platform.Spec.Version
	if installed == to && upgradingTo != to {
		return nil
	}
	return &Pending{Installed: installed, Resuming: upgradingTo == to, Upgrade: ForLoaded(a, lp, opts)}
}

// ApplyRun is `kubectl onto apply` of one platform of several (a directory, a
// fleet's cluster), ready to run: the upgrade the apply is, or the desired state it
// applies.
type ApplyRun struct {
	// Upgrade is set when the apply is an upgrade (ForApply); Desired is then nil.
	Upgrade *Pending
	// Desired is what the apply writes: lp rendered over the installed platform
	// (platform.Loaded.DesiredOver).
	Desired *plan.Desired
	// Notes are the lines to show before it runs: that the apply is an upgrade, or
	// the memory limits the watch raised that the render keeps or the file takes back
	// (platform.Loaded.KeepRemediations).
	Notes []string

	applier *apply.Applier
	options apply.Options
}

// NewApplyRun readies the apply of lp over live, the installed platform (nil when
// there is none), written with a: the upgrade ForApply finds, with upgrade's options,
// else an apply of lp rendered now, with opts (its Release set to lp's). It talks to
// no cluster. When live cannot become lp, or lp does not render, the error comes with
// a run that holds the notes only.
func NewApplyRun(a *apply.Applier, live *v1alpha1.OntoPlatform, lp platform.Loaded, opts apply.Options, upgrade Options) (*ApplyRun, error) {
	if p := ForApply(a, live, lp, upgrade); p != nil {
		note := fmt.Sprintf("spec.version changes %s → %s: upgrading component by component (as kubectl onto upgrade -f; canary soak %s)",
			p.Installed, lp.Platform.Spec.Version, p.Upgrade.Options.CanarySoak)
		return &ApplyRun{Upgrade: p, Notes: []string{note}}, nil
	}
	opts.Release = &lp.Release
	r := &ApplyRun{applier: a, options: opts}
	d, notes, err := lp.DesiredOver(live)
	r.Desired = d
	for _, n := range notes {
		r.Notes = append(r.Notes, "note: "+n)
	}
	return r, err
}

// ApplyResult is what an ApplyRun did.
type ApplyResult struct {
	// Changes counts the objects written, or the components the upgrade moved.
	Changes int
	// Status is the platform's status at the end; nil when not known.
	Status *v1alpha1.OntoPlatformStatus
}

// Run applies, or upgrades. The result is set as far as the run got, with its error.
func (r *ApplyRun) Run(ctx context.Context) (*ApplyResult, error) {
	out := &ApplyResult{}
	if r.Upgrade != nil {
		res, err := r.Upgrade.Upgrade.Run(ctx)
		if res != nil {
			out.Changes, out.Status = len(res.Steps), res.Status
		}
		return out, err
	}
	res, err := r.applier.Apply(ctx, r.Desired, r.options)
	if res != nil {
		out.Changes, out.Status = res.Applied, res.Status
	}
	return out, err
}
