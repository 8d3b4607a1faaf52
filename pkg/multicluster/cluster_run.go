/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package multicluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// Results of a platform on a cluster, besides a run's Outcomes.
const (
	// UpToDate: the platform already ran what the fleet asks; it was only checked.
	UpToDate = "up-to-date"
)

// PlatformResult is one platform's part of a cluster's run.
type PlatformResult struct {
	Namespace, Name string
	// Result is succeeded, failed or up-to-date.
	Result string
	// Changes counts the objects written (apply) or the components moved (upgrade).
	Changes int
	// Status is the platform's status at the end; nil when not known.
	Status *v1alpha1.OntoPlatformStatus
	// Plan is the platform's plan (Plan only).
	Plan *plan.Plan
}

// ClusterResult is what a cluster's run did to its platforms.
type ClusterResult struct {
	// Platforms are those the run reached, in order.
	Platforms []PlatformResult
	// Changes sums the platforms' changes.
	Changes int
	// Conflicts sums the fields the plans would take from another field manager
	// (Plan only).
	Conflicts int
	// UpToDate: every platform was up to date; nothing was written.
	UpToDate bool
}

// ClusterRun is the work of a fleet command on one cluster, its platforms in turn:
// Apply and Upgrade (apply and upgrade --fleet), Plan (plan --fleet and their dry
// runs), Status (status --fleet). Apply and Upgrade check each platform with doctor
// (doctor.Gate) before the next, since a cluster passes only when doctor finds no
// error there; a platform that already runs what the fleet asks is up to date and
// only checked, so running the same fleet command again resumes after the waves that
// finished, from the state the clusters keep.
type ClusterRun struct {
	Clients *kube.Clients
	Log     *slog.Logger
	// Observer, when set, returns what hears the progress of platform ref
	// (namespace/name).
	Observer func(ref string) func(apply.Event)
	// CRD is the OntoPlatform CRD (plan.CRD()), which Apply writes first.
	CRD *unstructured.Unstructured
	// Note, when set, hears what the run says of a platform beside its progress, a
	// line at a time; ref is namespace/name.
	Note func(ref, line string)
	// Options are the options of an apply (Apply).
	Options apply.Options
	// UpgradeOptions are the options of an upgrade: what Apply becomes when the file
	// changes the installed version, and what Upgrade runs.
	UpgradeOptions upgrade.Options
	// Adopt plans as apply --adopt would write (PlanApply).
	Adopt bool
}

// applier writes platform ref (namespace/name); "" for the CRD, whose write shows no
// progress.
func (c *ClusterRun) applier(ref string) *apply.Applier {
	a := apply.NewApplier(c.Clients, c.Log)
	if c.Observer != nil && ref != "" {
		a.Observer = c.Observer(ref)
	}
	return a
}

func (c *ClusterRun) note(ref, format string, args ...any) {
	if c.Note != nil {
		c.Note(ref, fmt.Sprintf(format, args...))
	}
}

// Apply applies each platform as apply -f does (an upgrade when the file changes the
// installed version), writing the CRD first when one of them needs applying. A
// platform up to date (platform.Loaded.UpToDate) is not applied.
func (c *ClusterRun) Apply(ctx context.Context, platforms []platform.Loaded) (*ClusterResult, error) {
	res := &ClusterResult{}
	crdApplied, skipped := false, 0
	for _, lp := range platforms {
		ref := lp.Platform.Namespace + "/" + lp.Platform.Name
		live, err := plan.LivePlatform(ctx, c.Clients, nil, lp.Platform.Namespace, lp.Platform.Name)
		if err != nil {
			return res, err
		}
		if lp.UpToDate(live) {
			c.note(ref, "up to date: %s at generation %d, version %s; nothing to apply", live.Status.Phase, live.Generation, live.Status.Version)
			res.Platforms = append(res.Platforms, PlatformResult{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name, Result: UpToDate, Status: &live.Status})
			skipped++
		} else {
			if !crdApplied {
				if _, err := c.applier("").ApplyCRD(ctx, c.CRD, c.Options); err != nil {
					return res, err
				}
				crdApplied = true
			}
			p, err := c.applyOne(ctx, live, lp, ref)
			res.Platforms = append(res.Platforms, p)
			res.Changes += p.Changes
			if err != nil {
				return res, fmt.Errorf("%s: %w", ref, err)
			}
		}
		if err := c.gate(ctx, lp, ref); err != nil {
			return res, err
		}
	}
	res.UpToDate = skipped == len(platforms)
	return res, nil
}

// applyOne applies one platform over live, the installed one.
func (c *ClusterRun) applyOne(ctx context.Context, live *v1alpha1.OntoPlatform, lp platform.Loaded, ref string) (PlatformResult, error) {
	p := PlatformResult{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name, Result: string(Failed)}
	run, err := upgrade.NewApplyRun(c.applier(ref), live, lp, c.Options, c.UpgradeOptions)
	if run != nil {
		for _, n := range run.Notes {
			c.note(ref, "%s", n)
		}
	}
	if err != nil {
		return p, err
	}
	out, err := run.Run(ctx)
	p.Changes, p.Status = out.Changes, out.Status
	if err == nil {
		p.Result = string(Succeeded)
	}
	return p, err
}

// Upgrade moves each platform to version (with catalog's entry), keeping its
// installed spec, as upgrade --to does; one already at version with no upgrade
// stopped is up to date. A platform not installed fails the cluster.
func (c *ClusterRun) Upgrade(ctx context.Context, platforms []platform.Loaded, catalog *release.Catalog, version string) (*ClusterResult, error) {
	res := &ClusterResult{}
	skipped := 0
	for _, lp := range platforms {
		ns, name := lp.Platform.Namespace, lp.Platform.Name
		ref := ns + "/" + name
		installed, upgradingTo, err := upgrade.InstalledVersion(ctx, c.Clients, ns, name)
		if err != nil {
			return res, err
		}
		p := PlatformResult{Namespace: ns, Name: name}
		switch {
		case installed == "":
			return res, fmt.Errorf("%s is not installed on this cluster: apply --fleet installs it", ref)
		case installed == version && upgradingTo != version:
			c.note(ref, "up to date: runs %s; nothing to upgrade", installed)
			p.Result = UpToDate
			skipped++
		default:
			out, err := c.newUpgrade(ref, ns, name, catalog, version).Run(ctx)
			p.Result = string(Succeeded)
			if out != nil {
				p.Changes, p.Status = len(out.Steps), out.Status
			}
			if err != nil {
				p.Result = string(Failed)
			}
			res.Changes += p.Changes
			if err != nil {
				res.Platforms = append(res.Platforms, p)
				return res, fmt.Errorf("%s: %w", ref, err)
			}
		}
		res.Platforms = append(res.Platforms, p)
		if err := c.gate(ctx, lp, ref); err != nil {
			return res, err
		}
	}
	res.UpToDate = skipped == len(platforms)
	return res, nil
}

// newUpgrade is the upgrade of platform namespace/name (ref: its progress; "" for a
// preview, which has none).
func (c *ClusterRun) newUpgrade(ref, namespace, name string, catalog *release.Catalog, version string) *upgrade.Upgrade {
	u := upgrade.New(c.applier(ref), namespace, name, c.UpgradeOptions)
	u.Catalog, u.ToVersion = catalog, version
	return u
}

// gate is doctor's check of one platform.
func (c *ClusterRun) gate(ctx context.Context, lp platform.Loaded, ref string) error {
	warnings, err := doctor.Gate(ctx, c.Clients, lp.Platform.Namespace, lp.Platform.Name)
	if err != nil {
		return err
	}
	c.note(ref, "doctor: no error (%d warnings)", warnings)
	return nil
}

// PlanFunc plans one platform of a cluster; nil when it is up to date.
type PlanFunc func(ctx context.Context, lp platform.Loaded) (*plan.Plan, error)

// PlanOptions tune Plan.
type PlanOptions struct {
	// Preflight, when set, runs apply's checks on each plan with these options, so a
	// dry run fails where apply would.
	Preflight *apply.Options
	// KeepObjects keeps the desired objects in the plans (for JSON and YAML); the text
	// shows none, and dropping them keeps a large fleet's run small.
	KeepObjects bool
}

// Plan plans each platform with planOne (PlanApply, or PreviewUpgrade), writing
// nothing: a platform up to date has no plan.
func (c *ClusterRun) Plan(ctx context.Context, platforms []platform.Loaded, planOne PlanFunc, opts PlanOptions) (*ClusterResult, error) {
	res := &ClusterResult{}
	for _, lp := range platforms {
		ref := lp.Platform.Namespace + "/" + lp.Platform.Name
		p, err := planOne(ctx, lp)
		if err != nil {
			return res, fmt.Errorf("%s: %w", ref, err)
		}
		if p == nil { // up to date: nothing to plan
			res.Platforms = append(res.Platforms, PlatformResult{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name, Result: UpToDate})
			continue
		}
		if opts.Preflight != nil {
			o := *opts.Preflight
			o.Release = &lp.Release
			if err := apply.Preflight(p, o); err != nil {
				return res, fmt.Errorf("%s: %w", ref, err)
			}
			if err := apply.CheckSecrets(p); err != nil {
				return res, fmt.Errorf("%s: %w", ref, err)
			}
		}
		if !opts.KeepObjects {
			p.DropObjects()
		}
		changes := p.Summary.Create + p.Summary.Update + p.Summary.Delete + p.Summary.Replace
		res.Platforms = append(res.Platforms, PlatformResult{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name, Result: string(Succeeded), Plan: p, Changes: changes})
		res.Changes += changes
		res.Conflicts += p.Summary.Conflicts
	}
	return res, nil
}

// PlanApply is what apply would do to lp, as plan -f plans it: lp rendered over the
// installed platform (platform.Loaded.DesiredOver, whose notes go to Note), then a
// server-side dry run.
func (c *ClusterRun) PlanApply(ctx context.Context, lp platform.Loaded) (*plan.Plan, error) {
	ref := lp.Platform.Namespace + "/" + lp.Platform.Name
	live, err := plan.LivePlatform(ctx, c.Clients, nil, lp.Platform.Namespace, lp.Platform.Name)
	if err != nil {
		return nil, err
	}
	d, notes, err := lp.DesiredOver(live)
	for _, n := range notes {
		c.note(ref, "note: %s", n)
	}
	if err != nil {
		return nil, err
	}
	return (&plan.Planner{Clients: c.Clients, Adopt: c.Adopt}).Plan(ctx, d)
}

// PreviewUpgrade is what Upgrade would do to lp's platform: its steps, said to Note,
// and the plan of the target; nil when it is up to date.
func (c *ClusterRun) PreviewUpgrade(ctx context.Context, lp platform.Loaded, catalog *release.Catalog, version string) (*plan.Plan, error) {
	ns, name := lp.Platform.Namespace, lp.Platform.Name
	ref := ns + "/" + name
	installed, upgradingTo, err := upgrade.InstalledVersion(ctx, c.Clients, ns, name)
	if err != nil {
		return nil, err
	}
	if installed == version && upgradingTo != version {
		c.note(ref, "up to date: runs %s; nothing to upgrade", installed)
		return nil, nil
	}
	preview, err := c.newUpgrade("", ns, name, catalog, version).Preview(ctx)
	if err != nil {
		return nil, err
	}
	c.note(ref, "%s → %s, %d steps: %s", preview.From, preview.To, len(preview.Steps), strings.Join(preview.Steps, "; "))
	return preview.Plan, nil
}

// Status reads each platform's status as status does (status.Observer); missing names
// those not installed ("namespace/name"). On an error, what was read before it comes
// with it.
func (c *ClusterRun) Status(ctx context.Context, platforms []platform.Loaded) (reports []*status.Report, missing []string, err error) {
	obs := &status.Observer{Clients: c.Clients, Now: time.Now}
	for _, lp := range platforms {
		r, err := obs.Observe(ctx, lp.Platform.Namespace, lp.Platform.Name)
		var notFound *inventory.NotFoundError
		switch {
		case errors.As(err, &notFound):
			missing = append(missing, lp.Platform.Namespace+"/"+lp.Platform.Name)
		case err != nil:
			return reports, missing, err
		default:
			reports = append(reports, r)
		}
	}
	return reports, missing, nil
}
