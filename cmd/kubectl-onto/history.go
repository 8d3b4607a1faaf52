/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// HistoryOptions are the options of `kubectl onto history`.
type HistoryOptions struct {
	*GlobalOptions
	OutputFlags
	PlatformArg

	format printers.Format
}

// NewCmdHistory returns `kubectl onto history`.
func NewCmdHistory(g *GlobalOptions) *cobra.Command {
	o := &HistoryOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "history [NAME]",
		Short: "List a platform's revisions: version, action, result and snapshot",
		Long: `History lists the revisions recorded in the platform's status, newest last: each
writing apply, upgrade, rollback and scale, with its version, result and age.

SNAPSHOT names the Secret that holds what the revision rendered from (spec with
spec.patches, release entry), which rollback and scale render again; only the newest
10 revisions keep one, and a failed run records none ("-"). DIGEST is the snapshot's
checked digest; a snapshot changed in the cluster reads "unreadable", and why.

NAME may be left out when the namespace holds one OntoPlatform.`,
		Example: `  kubectl onto history -n onto-system
  kubectl onto history onto-production -n onto-system -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json", "yaml")
	return cmd
}

// Complete reads the name, the namespace and the output format.
func (o *HistoryOptions) Complete(args []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	return o.PlatformArg.complete(o.GlobalOptions, args)
}

// Validate has no flag combinations to check.
func (o *HistoryOptions) Validate() error { return nil }

// Run reads the history and prints it.
func (o *HistoryOptions) Run(ctx context.Context) error {
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	r, err := upgrade.History(ctx, clients, o.namespace, o.Name)
	if err != nil {
		return err
	}
	return printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.HistoryView{HistoryReport: r, Now: time.Now()})
}
