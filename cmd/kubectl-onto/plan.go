/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// PlanOptions are the options of `kubectl onto plan`.
type PlanOptions struct {
	*GlobalOptions
	FileFlags
	OutputFlags
	// ParallelFlags tune a plan of several platforms.
	ParallelFlags
	// ClusterFleetFlags plan every cluster of a fleet file.
	ClusterFleetFlags
	// DetailedExitCode exits 2 when the plan has changes, 0 when it has none.
	DetailedExitCode bool
	// ShowUnchanged lists unchanged objects instead of counting them.
	ShowUnchanged bool
	// Adopt plans existing objects of no platform as updates, as apply --adopt would.
	Adopt bool

	format printers.Format
}

// NewCmdPlan returns `kubectl onto plan`.
func NewCmdPlan(g *GlobalOptions) *cobra.Command {
	o := &PlanOptions{GlobalOptions: g}
	o.FileFlags.Many = true
	cmd := &cobra.Command{
		Use:   "plan -f FILE|DIR",
		Short: "Show what apply would change, found by a server-side apply dry-run",
		Long: `Plan renders the platform and asks the API server, with a server-side apply
dry-run per object (field manager kubectl-onto), what applying it would do: each object
is a create, an update (with the changed fields, old and new values), a delete (an
object of this platform's inventory it no longer renders) or unchanged. Fields another
field manager owns are shown as conflicts. Secret values are never shown.

-o json prints the plan as data; apply --plan applies exactly that plan, and refuses
it if the cluster changed since.

A file of several documents, or a directory (its .yaml, .yml and .json files; -R for
its subdirectories), plans several platforms, --parallel at a time: each plan in the
file's order, then a table (NAMESPACE NAME RESULT CHANGES DURATION ERROR); -o json
prints {"platforms": [{"namespace", "name", "result", "plan", ...}], "success": ...}.
A platform that cannot be planned does not stop the others unless --fail-fast; the
run exits 1 naming it. --detailed-exitcode exits 2 when any plan has changes.

--fleet FLEET plans every cluster of a fleet file (see kubectl onto apply --help),
every wave: each cluster's plan, then a table CLUSTER WAVE CHANGES CONFLICTS; -o json
prints {"clusters": [{"cluster", "wave", "platforms": [{..., "plan"}], ...}]}. A
cluster that cannot be planned does not stop the others; the run exits 1 naming it.
--detailed-exitcode exits 2 when any cluster changes.`,
		Example: `  kubectl onto plan -f platform.yaml
  kubectl onto plan -f platform.yaml --detailed-exitcode   # 0 no changes, 2 changes, 1 error
  kubectl onto plan -f platform.yaml -o json > plan.json && kubectl onto apply -f platform.yaml --plan plan.json
  kubectl onto plan -f tenants/ -R --parallel 8             # every platform under tenants/
  kubectl onto plan --fleet fleet.yaml --detailed-exitcode  # every cluster of the fleet`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	o.FileFlags.AddFlags(cmd.Flags())
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json", "yaml", "jsonpath")
	o.ParallelFlags.AddFlags(cmd.Flags())
	o.ClusterFleetFlags.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.DetailedExitCode, "detailed-exitcode", false, "Exit 0 when there are no changes, 2 when there are, 1 on error")
	cmd.Flags().BoolVar(&o.ShowUnchanged, "show-unchanged", false, "List unchanged objects too")
	cmd.Flags().BoolVar(&o.Adopt, "adopt", false, "Plan as apply --adopt would: existing objects of no platform are updates, not conflicts")
	return cmd
}

// Complete parses the output format.
func (o *PlanOptions) Complete(_ []string) (err error) {
	o.format, err = o.OutputFlags.Format()
	return err
}

// Validate checks the flags.
func (o *PlanOptions) Validate() error {
	if err := o.ClusterFleetFlags.validate(o.GlobalOptions, o.FileFlags); err != nil {
		return err
	}
	if err := o.FileFlags.Validate(); o.Fleet == "" && err != nil {
		return err
	}
	return o.ParallelFlags.Validate()
}

// Run plans and prints: one platform as always, several each in turn (runMany).
func (o *PlanOptions) Run(ctx context.Context) error {
	if o.Fleet != "" {
		cf, err := o.loadClusterFleet(o.Fleet)
		if err != nil {
			return err
		}
		return o.planClusters(ctx, cf, planClusterOptions{format: o.format, adopt: o.Adopt, showUnchanged: o.ShowUnchanged, detailedExitCode: o.DetailedExitCode})
	}
	loaded, err := o.loadPlatforms(o.FileFlags)
	if err != nil {
		return err
	}
	if len(loaded) > 1 {
		o.clientShare = min(o.ParallelFlags.Parallel, len(loaded))
		return o.runMany(ctx, loaded)
	}
	lp := loaded[0]
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	d, err := liveDesired(ctx, clients, nil, &lp, o.ErrOut)
	if err != nil {
		return err
	}
	p, err := (&plan.Planner{Clients: clients, Adopt: o.Adopt}).Plan(ctx, d)
	if err != nil {
		return err
	}
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.PlanView{Plan: p, ShowUnchanged: o.ShowUnchanged}); err != nil {
		return err
	}
	if o.DetailedExitCode && p.HasChanges() {
		return &ExitError{Code: exitChanges}
	}
	return nil
}

// liveDesired renders lp, offline, with what the cluster keeps of the platform: the
// memory limits the watch raised (status.remediations), which an unchanged file must
// not take back (platform.Loaded.KeepRemediations, whose notes go to notes). The file
// was read and validated before any request; a change the live platform cannot take
// (a Kafka controller quorum, MinIO's layout, Redis's mode) is refused here, at its
// line, before any dry-run or write.
func liveDesired(ctx context.Context, clients *kube.Clients, shared *plan.SharedLists, lp *platform.Loaded, notes io.Writer) (*plan.Desired, error) {
	live, err := plan.LivePlatform(ctx, clients, shared, lp.Platform.Namespace, lp.Platform.Name)
	if err != nil {
		return nil, err
	}
	d, kept, err := lp.DesiredOver(live)
	for _, n := range kept {
		fmt.Fprintf(notes, "note: %s\n", n)
	}
	return d, err
}

// Clients connects to the cluster kubectl's flags point at. The clients are built once
// per process, so plan-then-apply reads discovery once.
func (g *GlobalOptions) Clients() (*kube.Clients, error) {
	g.clientsOnce.Do(func() {
		cfg, err := g.ConfigFlags.ToRESTConfig()
		if err != nil {
			g.clientsErr = fmt.Errorf("kubeconfig: %w", err)
			return
		}
		if levels := requestLogLevels(g.Verbosity); len(levels) > 0 {
			// client-go's own request logger, as kubectl's -v: through klog, which
			// goes to stderr with -v. It never logs a body, and masks credentials.
			cfg = rest.CopyConfig(cfg)
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return transport.NewDebuggingRoundTripper(rt, levels...) })
		}
		if g.clientShare > 1 {
			cfg = kube.ShareRateLimits(cfg, g.clientShare)
		}
		g.clients, g.clientsErr = kube.New(cfg)
	})
	return g.clients, g.clientsErr
}

// requestLogLevels is what -v N logs of each API request, as kubectl does: from 6 the
// method, URL, status and time; from 8 the request and response headers too
// (Authorization masked). Bodies never: they may hold Secret values.
func requestLogLevels(verbosity int) []transport.DebugLevel {
	switch {
	case verbosity >= 8:
		return []transport.DebugLevel{transport.DebugURLTiming, transport.DebugResponseStatus, transport.DebugRequestHeaders, transport.DebugResponseHeaders}
	case verbosity >= 6:
		return []transport.DebugLevel{transport.DebugURLTiming, transport.DebugResponseStatus}
	}
	return nil
}
