/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// UpgradeFlags are the knobs of the component-by-component procedure, shared by
// upgrade and rollback.
type UpgradeFlags struct {
	CanarySoak    time.Duration
	CanaryTimeout time.Duration
	Atomic        bool
}

// AddFlags registers the procedure's flags.
func (f *UpgradeFlags) AddFlags(flags *pflag.FlagSet) {
	flags.DurationVar(&f.CanarySoak, "canary-soak", 30*time.Second, "How long a ready canary must stay ready, without restarts, crashes or OOM kills, before its component rolls (0: only one 10s crash-loop window, less the workload's minReadySeconds)")
	flags.DurationVar(&f.CanaryTimeout, "canary-timeout", 5*time.Minute, "How long a canary (or a StatefulSet's first updated pod) may take to become ready")
	flags.BoolVar(&f.Atomic, "atomic", false, "When a component fails, return every component this run moved, not only the failed one")
}

// options are the upgrade options of the flags, its steps applied with apply's.
func (f *UpgradeFlags) options(a ApplyFlags) upgrade.Options {
	opts := upgrade.DefaultOptions()
	opts.Apply = a.Options("upgrade")
	opts.CanarySoak, opts.CanaryTimeout, opts.Atomic = f.CanarySoak, f.CanaryTimeout, f.Atomic
	return opts
}

// UpgradeOptions are the options of `kubectl onto upgrade` and `rollback`.
type UpgradeOptions struct {
	*GlobalOptions
	FileFlags
	ApplyFlags
	UpgradeFlags
	OutputFlags
	DryRunFlags
	PlatformArg
	// To is the target version (upgrade --to).
	To string
	// Force allows a downgrade or a version off the upgrade path.
	Force bool
	// ToRevision is rollback's target revision; 0 is the previous Succeeded one.
	ToRevision int64
	// rollback runs the procedure towards an older revision, in reverse plane order.
	rollback bool
	// ClusterFleetFlags upgrade every cluster of a fleet file (--to only).
	ClusterFleetFlags
	// Canary: rollback moves component by component behind canaries, as upgrade
	// does, instead of applying the revision plane by plane.
	Canary bool

	format printers.Format
}

// NewCmdUpgrade returns `kubectl onto upgrade`.
func NewCmdUpgrade(g *GlobalOptions) *cobra.Command {
	o := &UpgradeOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "upgrade [NAME] --to VERSION | -f FILE",
		Short: "Move a platform to a new version, component by component, each behind a canary",
		Long: `Upgrade moves an installed platform to a new version one component at a time, in
plane order (tenancy first, observability last), rendering the components not moved
yet from the revision it starts from:

  Deployment   a canary (<name>-canary, one pod of the new version) starts beside the
               running pods; the Service sends it about 1/(n+1) of the requests. It
               must become ready within --canary-timeout and stay ready, without a
               restart, crash loop, OOM kill or image pull error, for --canary-soak
               (with 0, for 10 s less the workload's minReadySeconds: a container that
               crashes at start is caught before the next component moves).
               Then the Deployment rolls and the canary goes. With maxSurge 0 (pods
               holding GPUs) the canary takes the place of one old pod.
  StatefulSet  the highest ordinal updates first (partition) and is soaked the same
               way, then the rest roll in order.

A component that fails returns to its old objects by itself; the ones before it stay
on the new version (--atomic returns them too). The exit code is 1 and the message
names the component, pod and reason. Progress is kept in the platform's
status.upgrade, so running the same command again resumes where it stopped; apply
refuses to run meanwhile. Nothing is pruned until every component moved: the old
ConfigMaps stay for the old pods and for a rollback.

--to takes the version from the release catalog and keeps the rest of the installed
spec; -f FILE takes the whole spec of the file. A downgrade or a version outside the
release's upgrade path is refused unless --force.

--fleet FLEET --to VERSION upgrades the fleet's platforms on every cluster of a fleet
file (see kubectl onto apply --help), wave by wave: a canary cluster's failure stops
the fleet before the next wave, which is not touched. A cluster already at VERSION is
up to date; running the same command again resumes the stopped upgrade, then the
waves after it. With --dry-run it previews every wave: each cluster's steps and plan,
then CLUSTER WAVE CHANGES CONFLICTS.`,
		Example: `  kubectl onto upgrade onto-production -n onto-system --to 1.6.0
  kubectl onto upgrade -n onto-system --to 1.6.0 --dry-run           # the steps and the plan, nothing written
  kubectl onto upgrade -f platform.yaml --canary-soak 2m --atomic    # the file's spec, at its spec.version
  kubectl onto upgrade onto-production -n onto-system --to 1.6.0 -o json > events.jsonl
  kubectl onto upgrade --fleet fleet.yaml --to 1.6.0                 # every cluster, canary wave first`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.To, "to", "", "Target version from the release catalog")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Allow a downgrade or a version outside the release's upgrade path")
	return cmd
}

// NewCmdRollback returns `kubectl onto rollback`.
func NewCmdRollback(g *GlobalOptions) *cobra.Command {
	o := &UpgradeOptions{GlobalOptions: g, rollback: true}
	cmd := &cobra.Command{
		Use:   "rollback [NAME]",
		Short: "Return a platform to an earlier revision, fast, services first",
		Long: `Rollback renders an earlier revision from its snapshot (the spec, patches and
release entry it was applied with; kubectl onto history lists them) and returns the
platform to it. Everything it needs is in the cluster: no file, no --releases.

A revision that ran Succeeded has proven itself, so by default there is no canary:
the revision is applied plane by plane in reverse plane order (the services go back
before the backing services they use), each plane's components side by side, waiting
for each plane's health before the next. Only objects that differ are written: the
rollback of a scale changes one workload. --canary moves component by component
behind canaries instead, with upgrade's --canary-soak and --canary-timeout.

It restores objects, not data: a database migrated by the newer version stays
migrated. There is no version guard, but a rollback across a release migration marked
not backward compatible is refused unless --force (restore the data first).

Without --to-revision it returns to the Succeeded revision before the newest one. On
a platform whose upgrade stopped (failed or interrupted), it undoes that upgrade: the
components it moved go back, newest first, from the target the upgrade stored when
it started. An interrupted rollback resumes when run again.`,
		Example: `  kubectl onto rollback onto-production -n onto-system
  kubectl onto rollback onto-production -n onto-system --to-revision 3
  kubectl onto rollback onto-production -n onto-system --canary --canary-soak 1m
  kubectl onto history onto-production -n onto-system     # the revisions to choose from`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	o.addFlags(cmd)
	cmd.Flags().Int64Var(&o.ToRevision, "to-revision", 0, "Revision to return to (default: the Succeeded one before the newest)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Roll back across a migration that is not backward compatible (after restoring its data)")
	cmd.Flags().BoolVar(&o.Canary, "canary", false, "Move component by component behind canaries (see --canary-soak), not plane by plane")
	return cmd
}

func (o *UpgradeOptions) addFlags(cmd *cobra.Command) {
	if !o.rollback {
		o.FileFlags.AddFlags(cmd.Flags())
	}
	o.ApplyFlags.AddFlags(cmd.Flags())
	o.UpgradeFlags.AddFlags(cmd.Flags())
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json")
	o.DryRunFlags.AddFlags(cmd.Flags(), "show the steps and the plan of the target; nothing is written")
	if !o.rollback {
		o.ClusterFleetFlags.AddFlags(cmd.Flags())
	}
}

// Complete reads the name, the namespace and the output format.
func (o *UpgradeOptions) Complete(args []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	return o.PlatformArg.complete(o.GlobalOptions, args)
}

// Validate checks flag combinations.
func (o *UpgradeOptions) Validate() error {
	if _, err := o.Strategy(); err != nil {
		return err
	}
	if err := o.ApplyFlags.Validate(); err != nil {
		return err
	}
	if err := o.ClusterFleetFlags.validate(o.GlobalOptions, o.FileFlags); err != nil {
		return err
	}
	switch {
	case o.Fleet != "" && o.To == "":
		return errors.New("--fleet needs --to VERSION: every cluster's platform moves to it, keeping its spec")
	case o.Fleet != "" && o.Name != "":
		return errors.New("--fleet names the platforms in its platform files: pass no NAME")
	}
	if !o.rollback && o.Fleet == "" {
		switch {
		case o.To == "" && o.Filename == "":
			return errors.New("say what to upgrade to: --to VERSION (the installed spec at that version) or -f FILE (the file's spec)")
		case o.To != "" && o.Filename != "":
			return errors.New("--to and -f both name a target: pass one (the file's spec.version is its target)")
		}
	}
	if o.ToRevision < 0 {
		return fmt.Errorf("--to-revision must be positive, not %d", o.ToRevision)
	}
	if o.CanarySoak < 0 || o.CanaryTimeout <= 0 {
		return fmt.Errorf("--canary-soak must be 0 or positive and --canary-timeout positive, not %s and %s", o.CanarySoak, o.CanaryTimeout)
	}
	return nil
}

// Run upgrades (or rolls back) within --timeout.
func (o *UpgradeOptions) Run(ctx context.Context) error {
	command := "upgrade"
	if o.rollback {
		command = "rollback"
	}
	return runWithin(ctx, o.Timeout, command, "run the same command again to resume", func(ctx context.Context) error {
		if o.Fleet != "" {
			return o.runFleetOfClusters(ctx)
		}
		u, err := o.newUpgrade(ctx)
		if err != nil {
			return err
		}
		if dry, _ := o.Strategy(); dry != apply.DryRunNone {
			return o.dryRun(ctx, u)
		}
		return o.runUpgradeWith(ctx, u, o.format)
	})
}

// newUpgrade builds the procedure from the flags: the platform's name (the only one
// of the namespace when not given), the target and the options.
func (o *UpgradeOptions) newUpgrade(ctx context.Context) (*upgrade.Upgrade, error) {
	clients, err := o.Clients()
	if err != nil {
		return nil, err
	}
	catalog, err := o.Catalog()
	if err != nil {
		return nil, err
	}
	opts := o.UpgradeFlags.options(o.ApplyFlags)
	opts.Force = o.Force || o.ForceVersion
	if o.rollback {
		opts.Action, opts.Apply.Action = "rollback", "rollback"
		opts.Direct = !o.Canary
	}
	a := apply.NewApplier(clients, o.Logger())
	u := upgrade.New(a, o.namespace, o.Name, opts)
	if o.Filename != "" {
		lp, err := o.loadPlatform(o.FileFlags)
		if err != nil {
			return nil, err
		}
		if o.Name != "" && o.Name != lp.Platform.Name {
			return nil, fmt.Errorf("NAME %s and the file's platform %s differ: pass one", o.Name, lp.Platform.Name)
		}
		u = upgrade.ForLoaded(a, lp, opts)
	}
	u.Catalog, u.ToVersion, u.ToRevision, u.Reverse = catalog, o.To, o.ToRevision, o.rollback
	if u.Name == "" {
		if u.Name, err = u.PlatformName(ctx); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// dryRun prints the steps and the plan of the target, writing nothing.
func (o *UpgradeOptions) dryRun(ctx context.Context, u *upgrade.Upgrade) error {
	preview, err := u.Preview(ctx)
	if err != nil {
		return err
	}
	if o.format == printers.FormatJSON {
		return printers.WriteJSON(o.Out, preview)
	}
	how := "component by component"
	if preview.Direct {
		how = "plane by plane, no canary; its components"
	}
	fmt.Fprintf(o.Out, "%s %s/%s: %s → %s, %s:\n", u.Options.Action, u.Namespace, u.Name, preview.From, preview.To, how)
	for i, s := range preview.Steps {
		fmt.Fprintf(o.Out, "  %2d. %s\n", i+1, s)
	}
	fmt.Fprintln(o.Out)
	if err := printers.Write(o.Out, printers.FormatText, o.Terminal(o.Out), printers.PlanView{Plan: preview.Plan}); err != nil {
		return err
	}
	fmt.Fprintln(o.ErrOut, "dry run: nothing was written")
	return nil
}
