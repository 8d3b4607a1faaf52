/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// UnlockOptions are the options of `kubectl onto unlock`.
type UnlockOptions struct {
	*GlobalOptions
	PlatformArg
	// Yes skips the confirmation.
	Yes bool
}

// NewCmdUnlock returns `kubectl onto unlock`.
func NewCmdUnlock(g *GlobalOptions) *cobra.Command {
	o := &UnlockOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "unlock NAME",
		Short: "Break the lock of a platform whose apply or uninstall died",
		Long: `Every run that writes a platform (apply, uninstall) holds a lock: a Lease named
onto-lock-NAME in the platform's namespace, renewed while the run lives. A run that
dies leaves it until it expires (60s); a later run on the same host takes it over at
once when the process that held it is gone. From another machine, or with a longer
lease, unlock deletes it after showing who holds it and asking for confirmation.

If the holder still runs, it stops writing at its next renewal: break a lock only
when you know its run is dead.`,
		Example: `  kubectl onto unlock onto-production -n onto-system
  kubectl onto unlock onto-production -n onto-system --yes   # without asking, for scripts`,
		Args: cobra.ExactArgs(1),
		RunE: runCommand(o),
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation")
	return cmd
}

// Complete reads the name and the namespace.
func (o *UnlockOptions) Complete(args []string) error {
	return o.PlatformArg.complete(o.GlobalOptions, args)
}

// Validate has nothing to check: the name is required by the command's arguments.
func (o *UnlockOptions) Validate() error { return nil }

// Run shows the holder, asks, and deletes the lease.
func (o *UnlockOptions) Run(ctx context.Context) error {
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	holder, expires, err := apply.LeaseOf(ctx, clients.Kube, o.namespace, o.Name)
	if err != nil {
		return err
	}
	if holder == "" {
		fmt.Fprintf(o.Out, "platform %s/%s is not locked\n", o.namespace, o.Name)
		return nil
	}
	state := fmt.Sprintf("expires in %s", time.Until(expires).Round(time.Second))
	if time.Now().After(expires) {
		state = "expired: the next run takes it over anyway"
	}
	fmt.Fprintf(o.ErrOut, "platform %s/%s is locked by %s (%s)\n", o.namespace, o.Name, holder, state)
	if !o.Yes {
		fmt.Fprint(o.ErrOut, "break the lock? if that run is still alive it stops writing at its next renewal [y/N] ")
		answer, _ := bufio.NewReader(o.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return &ExitError{Code: exitFailure, Err: fmt.Errorf("not unlocked: the lock of %s/%s is still held by %s", o.namespace, o.Name, holder)}
		}
	}
	if _, err := apply.Unlock(ctx, clients.Kube, o.namespace, o.Name); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "unlocked platform %s/%s (the lock of %s was deleted)\n", o.namespace, o.Name, holder)
	return nil
}
