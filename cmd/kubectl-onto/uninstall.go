/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// UninstallOptions are the options of `kubectl onto uninstall`.
type UninstallOptions struct {
	*GlobalOptions
	OutputFlags
	PlatformArg
	// DeleteData also deletes volumes, generated Secrets and the namespace.
	DeleteData bool
	DryRunFlags
	// Timeout bounds the whole run and PlaneTimeout the wait for each plane's objects
	// to be gone, as in apply.
	Timeout      time.Duration
	PlaneTimeout time.Duration
	// LockWait is how long to wait for another run's lock.
	LockWait time.Duration

	format printers.Format
}

// NewCmdUninstall returns `kubectl onto uninstall`.
func NewCmdUninstall(g *GlobalOptions) *cobra.Command {
	o := &UninstallOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "uninstall [NAME]",
		Short: "Delete a platform, plane by plane in reverse order, keeping its data",
		Long: `Uninstall deletes the objects of the platform's inventory (those labelled
applyset.kubernetes.io/part-of with its id, never anything else) in reverse install
order: first the service planes together (observability, gateway, intelligence, data,
control: none waits for another to stop), then infrastructure once they are gone, then
tenancy. Each stage waits until its objects and their pods are gone before the next,
then the OntoPlatform itself goes. It holds the same lock as apply, so it never runs
beside an apply. The OntoPlatform CRD stays.

PersistentVolumeClaims, generated Secrets (database passwords, MinIO keys) and the
namespace are kept, so a later apply finds the data and credentials again.
--delete-data deletes them too: the namespace only when the platform created it and
it holds nothing the platform does not own.

An interrupted run (Ctrl-C, kill -9, a timeout) is finished by running the same
command again: it deletes what is left, in the same order. Once the OntoPlatform is
gone, the re-run removes the lock the interrupted run left, or with --delete-data
waits for the namespace that run deleted; with nothing left, it fails as not found.

NAME may be left out when the namespace holds one OntoPlatform.`,
		Example: `  kubectl onto uninstall onto-production -n onto-system --dry-run   # what would go, and what stays
  kubectl onto uninstall onto-production -n onto-system
  kubectl onto uninstall onto-dev -n onto-dev --delete-data          # volumes and credentials too`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json")
	cmd.Flags().BoolVar(&o.DeleteData, "delete-data", false, "Also delete PersistentVolumeClaims, generated Secrets and the namespace the platform created")
	o.DryRunFlags.AddFlags(cmd.Flags(), "list what would be deleted and kept, deleting nothing (server: each delete is also sent as a dry run)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 30*time.Minute, "How long the whole run may take (0: no limit)")
	cmd.Flags().DurationVar(&o.PlaneTimeout, "plane-timeout", 5*time.Minute, "How long each plane's objects may take to be gone")
	cmd.Flags().DurationVar(&o.LockWait, "lock-wait", 0, "How long to wait for another run of this platform to release its lock (0: fail at once)")
	return cmd
}

// Complete reads the name, the namespace and the output format.
func (o *UninstallOptions) Complete(args []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	return o.PlatformArg.complete(o.GlobalOptions, args)
}

// Validate checks the flags.
func (o *UninstallOptions) Validate() error {
	if _, err := o.Strategy(); err != nil {
		return err
	}
	if o.Timeout < 0 {
		return fmt.Errorf("--timeout must be 0 (no limit) or positive, not %s", o.Timeout)
	}
	if o.PlaneTimeout <= 0 {
		return fmt.Errorf("--plane-timeout must be positive, not %s", o.PlaneTimeout)
	}
	return nil
}

// Run uninstalls, or shows what uninstalling would do.
func (o *UninstallOptions) Run(ctx context.Context) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	opts := apply.UninstallOptions{DeleteData: o.DeleteData, DryRun: apply.DryRunStrategy(o.DryRun), PlaneTimeout: o.PlaneTimeout,
		Holder: apply.DefaultHolder(), LockWait: o.LockWait}
	dryRun := opts.DryRun != apply.DryRunNone
	applier := apply.NewApplier(clients, o.Logger())
	stopSpinner := func() {}
	if !dryRun {
		progress := o.newProgress(o.format)
		applier.Observer = progress.Handle
		stopSpinner = progress.Start(ctx)
	}
	res, err := applier.Uninstall(ctx, o.namespace, o.Name, opts)
	stopSpinner()
	if err != nil {
		return err
	}
	if dryRun {
		return printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.UninstallPlanView{UninstallPlan: res.Plan, DryRun: opts.DryRun})
	}
	if o.format == printers.FormatText {
		p := res.Plan
		fmt.Fprintf(o.Out, "OntoPlatform %s/%s uninstalled: %d objects deleted, %d kept\n", p.Platform.Namespace, p.Platform.Name, res.Deleted, len(p.Kept))
	}
	return nil
}
