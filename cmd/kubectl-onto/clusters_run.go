/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/multicluster"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// runFleetOfClusters is apply --fleet: each cluster's platforms applied as apply -f
// does (an upgrade when the file changes the installed version), wave by wave. A
// cluster passes when its runs succeeded and doctor finds no error; a cluster whose
// platforms already run the file's spec, Running, is up to date and only checked.
func (o *ApplyOptions) runFleetOfClusters(ctx context.Context) error {
	dryRun, _ := o.Strategy()
	switch {
	case o.PlanFile != "":
		return fmt.Errorf("--plan applies the saved plan of one platform on one cluster; with --fleet, plan --fleet shows every cluster's")
	case dryRun == apply.DryRunClient:
		return fmt.Errorf("--dry-run=client with --fleet: the clusters differ only by their patches; kubectl onto render -f PLATFORM prints what a platform becomes, --dry-run=server plans every cluster")
	}
	cf, err := o.loadClusterFleet(o.Fleet)
	if err != nil {
		return err
	}
	if dryRun == apply.DryRunServer {
		preflight := o.ApplyFlags.Options("apply")
		return o.GlobalOptions.planClusters(ctx, cf, planClusterOptions{format: o.format, adopt: o.Adopt, preflight: &preflight})
	}
	crd, err := plan.CRD()
	if err != nil {
		return err
	}
	view, _ := o.runClusterFleet(ctx, cf, "apply", o.format, false, func(ctx context.Context, m multicluster.Member, cc *clusterClient, s fleetStreams, row *printers.ClusterRow) error {
		run := o.clusterRun(cc, s)
		run.CRD, run.Options, run.UpgradeOptions = crd, o.ApplyFlags.Options("apply"), o.upgradeOptions()
		res, err := run.Apply(ctx, cf.platforms[m.Context])
		fillClusterRow(row, res)
		return err
	})
	if err := o.writeFleetRun(o.format, view); err != nil {
		return err
	}
	return clusterFleetError(ctx, view)
}

// clusterRun is the run of a fleet command on one cluster, its progress and notes
// printed as the command's.
func (g *GlobalOptions) clusterRun(cc *clusterClient, s fleetStreams) *multicluster.ClusterRun {
	return &multicluster.ClusterRun{Clients: cc.Clients, Log: g.Logger(),
		Observer: func(ref string) func(apply.Event) { return s.progress(ref).Handle },
		Note:     func(ref, line string) { fmt.Fprintln(s.notes(ref), line) },
	}
}

// fillClusterRow adds what a cluster's run did to its row.
func fillClusterRow(row *printers.ClusterRow, res *multicluster.ClusterResult) {
	for _, p := range res.Platforms {
		row.Platforms = append(row.Platforms, printers.FleetPlatform{Namespace: p.Namespace, Name: p.Name, Result: p.Result, Changes: p.Changes,
			Plan: p.Plan, Status: fleetStatus(p.Status)})
	}
	row.Changes += res.Changes
	row.Conflicts += res.Conflicts
	if res.UpToDate {
		row.Result = multicluster.UpToDate
	}
}

// writeFleetRun prints the outcome of apply or upgrade --fleet: the table, or with
// -o json one line after the progress's JSON lines.
func (g *GlobalOptions) writeFleetRun(format printers.Format, view printers.ClusterFleetView) error {
	if format != printers.FormatJSON {
		return printers.Write(g.Out, printers.FormatText, g.Terminal(g.Out), view)
	}
	data, err := json.Marshal(view)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(g.Out, "%s\n", data)
	return err
}

// runFleetOfClusters is upgrade --fleet --to VERSION: each cluster's platforms
// upgraded as upgrade --to does, wave by wave; a cluster already at VERSION with no
// upgrade stopped is up to date. A stopped upgrade (a canary failed) resumes where it
// stopped when the command runs again. --dry-run previews every wave.
func (o *UpgradeOptions) runFleetOfClusters(ctx context.Context) error {
	cf, err := o.loadClusterFleet(o.Fleet)
	if err != nil {
		return err
	}
	catalog, err := o.Catalog()
	if err != nil {
		return err
	}
	if _, err := catalog.Get(o.To); err != nil {
		return err
	}
	upgradeOptions := o.UpgradeFlags.options(o.ApplyFlags)
	upgradeOptions.Force = o.Force || o.ForceVersion
	if dry, _ := o.Strategy(); dry != apply.DryRunNone {
		// Every wave's preview: the steps on stderr, the plans and the table on stdout.
		return o.GlobalOptions.planClusters(ctx, cf, planClusterOptions{format: o.format,
			planOne: func(run *multicluster.ClusterRun) multicluster.PlanFunc {
				run.UpgradeOptions = upgradeOptions
				return func(ctx context.Context, lp platform.Loaded) (*plan.Plan, error) {
					return run.PreviewUpgrade(ctx, lp, catalog, o.To)
				}
			}})
	}
	view, _ := o.runClusterFleet(ctx, cf, "upgrade", o.format, false, func(ctx context.Context, m multicluster.Member, cc *clusterClient, s fleetStreams, row *printers.ClusterRow) error {
		run := o.clusterRun(cc, s)
		run.UpgradeOptions = upgradeOptions
		res, err := run.Upgrade(ctx, cf.platforms[m.Context], catalog, o.To)
		fillClusterRow(row, res)
		return err
	})
	if err := o.writeFleetRun(o.format, view); err != nil {
		return err
	}
	return clusterFleetError(ctx, view)
}

// planClusterOptions tune plan --fleet and apply --fleet --dry-run=server.
type planClusterOptions struct {
	format           printers.Format
	adopt            bool
	showUnchanged    bool
	detailedExitCode bool
	// preflight, when set, runs apply's checks on each plan, so a dry run fails where
	// apply would.
	preflight *apply.Options
	// planOne is how a cluster's run plans each platform; nil plans as plan -f does
	// (ClusterRun.PlanApply).
	planOne func(run *multicluster.ClusterRun) multicluster.PlanFunc
}

// planClusters plans every cluster of the fleet, all waves (planning changes
// nothing, so one cluster's failure does not hide the others' plans): each plan,
// then the table CLUSTER WAVE CHANGES CONFLICTS.
func (g *GlobalOptions) planClusters(ctx context.Context, cf *clusterFleet, o planClusterOptions) error {
	popts := multicluster.PlanOptions{Preflight: o.preflight, KeepObjects: o.format != printers.FormatText}
	view, _ := g.runClusterFleet(ctx, cf, "plan", printers.FormatText, true, func(ctx context.Context, m multicluster.Member, cc *clusterClient, s fleetStreams, row *printers.ClusterRow) error {
		run := g.clusterRun(cc, s)
		run.Adopt = o.adopt
		planOne := run.PlanApply
		if o.planOne != nil {
			planOne = o.planOne(run)
		}
		res, err := run.Plan(ctx, cf.platforms[m.Context], planOne, popts)
		fillClusterRow(row, res)
		return err
	})
	view.ShowUnchanged = o.showUnchanged
	if err := printers.Write(g.Out, o.format, g.Terminal(g.Out), view); err != nil {
		return err
	}
	if err := clusterFleetError(ctx, view); err != nil {
		return err
	}
	if o.detailedExitCode && slices.ContainsFunc(view.Clusters, func(c printers.ClusterRow) bool { return c.Changes > 0 }) {
		return &ExitError{Code: exitChanges}
	}
	return nil
}

// statusClusters is status --fleet: every cluster's platforms as status reports
// them, one row each, all clusters at once (each wave's maxParallel at a time).
// Exit 1 when a cluster cannot be read.
func (o *StatusOptions) statusClusters(ctx context.Context) error {
	// --timeout bounds the whole report: a cluster that does not answer (a dropped
	// connection rather than a refused one) fails instead of hanging.
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cf, err := o.loadClusterFleet(o.Fleet)
	if err != nil {
		return err
	}
	members := cf.Clusters()
	index := map[string]int{}
	for i, m := range members {
		index[m.Context] = i
	}
	// One slot per cluster: each goroutine writes its own.
	items := make([]*printers.ClusterStatusItem, len(members))
	runner := &multicluster.Runner[struct{}]{AllWaves: true, Do: func(ctx context.Context, m multicluster.Member) (struct{}, error) {
		item := &printers.ClusterStatusItem{Cluster: m.DisplayName(), Context: m.Context, Wave: m.Wave, Platforms: []*status.Report{}}
		items[index[m.Context]] = item
		err := func() error {
			cc, err := cf.connect(o.GlobalOptions, m)
			if err != nil {
				return err
			}
			reports, missing, err := (&multicluster.ClusterRun{Clients: cc.Clients}).Status(ctx, cf.platforms[m.Context])
			item.Platforms, item.Missing = append(item.Platforms, reports...), missing
			return err
		}()
		if err != nil {
			item.Error = cf.explain(err, m).Error()
		}
		return struct{}{}, err
	}}
	rep := runner.Run(ctx, cf.Fleet)
	view := printers.ClusterStatusView{Fleet: cf.Path}
	for _, it := range items {
		if it != nil {
			view.Clusters = append(view.Clusters, *it)
		}
	}
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), view); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if rep.Failures > 0 {
		return &ExitError{Code: exitFailure, Silent: true}
	}
	return nil
}
