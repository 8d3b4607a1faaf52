/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// scaleApplyFlags are the ApplyFlags scale takes: the run's timeouts, the lock and
// conflicts. The rest do not apply: scale prunes only a PodDisruptionBudget that
// scaling down makes unneeded, never changes the version and adopts nothing.
var scaleApplyFlags = []string{"timeout", "plane-timeout", "wait", "crashloop-restarts", "lock-wait", "lock-ttl", "retry-budget", "force-conflicts"}

// ScaleOptions are the options of `kubectl onto scale`.
type ScaleOptions struct {
	*GlobalOptions
	ApplyFlags
	OutputFlags
	// Name of the platform; empty picks the only one in the namespace.
	Name string
	// Component to scale.
	Component string
	// Replicas, Min and Max are nil unless given.
	Replicas, Min, Max *int32

	namespace string
	format    printers.Format
}

// NewCmdScale returns `kubectl onto scale`.
func NewCmdScale(g *GlobalOptions) *cobra.Command {
	o := &ScaleOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "scale [NAME] COMPONENT (--replicas N | --min A --max B)",
		Short: "Change one component's replicas, or its autoscaler's bounds, without the file",
		Long: `Scale changes the replica count of one component (--replicas), or the bounds of
its HorizontalPodAutoscaler when it is autoscaled (--min, --max), in the cluster:
it edits the spec of the platform's newest successful revision (its snapshot, with
spec.patches, so their effects stay), validates it, renders it with that revision's
release entry and applies it plane by plane like apply, recording a revision (action
scale) with a snapshot of its own. kubectl onto history lists it.

Only the component's workload replicas, its HorizontalPodAutoscaler and its
PodDisruptionBudget (added above one replica) may change: scale refuses, before any
write, when the cluster drifted from that revision (apply the file first), or when
the component's configuration follows its replica count (kafka, minio: change the
file and apply it).

The platform file then differs from the cluster: put the new value in it, or the
next apply -f reverts the scale.

NAME may be left out when the namespace holds one OntoPlatform. COMPONENT is one of:
` + scaleComponents(),
		Example: `  kubectl onto scale gateway --replicas 3 -n onto-system
  kubectl onto scale onto-production ontology-service --min 3 --max 12 -n onto-system
  kubectl onto scale gateway --replicas 2 -n onto-system -o json   # progress as JSON lines`,
		Args: cobra.RangeArgs(1, 2),
		RunE: runCommand(o),
	}
	// ApplyFlags' own definitions (usage, defaults) of the flags scale takes; the
	// others keep their defaults (prune on, no delete limit).
	all := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	o.ApplyFlags.AddFlags(all)
	for _, name := range scaleApplyFlags {
		cmd.Flags().AddFlag(all.Lookup(name))
	}
	cmd.Flags().Var(&optionalInt32{&o.Replicas}, "replicas", "Replica count of a component without autoscaling (0 stops it)")
	cmd.Flags().Var(&optionalInt32{&o.Min}, "min", "Lowest replica count the autoscaler of an autoscaled component keeps (autoscaling.minReplicas)")
	cmd.Flags().Var(&optionalInt32{&o.Max}, "max", "Highest replica count the autoscaler of an autoscaled component may reach (autoscaling.maxReplicas)")
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json")
	cmd.ValidArgsFunction = g.completeScaleArgs
	return cmd
}

// Complete reads NAME and COMPONENT, the namespace and the output format.
func (o *ScaleOptions) Complete(args []string) (err error) {
	o.Component = args[len(args)-1]
	if len(args) == 2 {
		o.Name = args[0]
	}
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	o.namespace, err = o.currentNamespace()
	return err
}

// Validate checks the flag combinations and values; the component and what it
// allows are checked against the platform's spec.
func (o *ScaleOptions) Validate() error {
	if err := o.ApplyFlags.Validate(); err != nil {
		return err
	}
	switch {
	case o.Replicas != nil && (o.Min != nil || o.Max != nil):
		return errors.New("--replicas and --min/--max exclude each other: --replicas scales a component without autoscaling, --min/--max bound an autoscaled one")
	case o.Replicas == nil && o.Min == nil && o.Max == nil:
		return errors.New("nothing to change: give --replicas N, or --min and/or --max for an autoscaled component")
	case o.Replicas != nil && *o.Replicas < 0:
		return fmt.Errorf("--replicas %d: must be 0 or more", *o.Replicas)
	case o.Min != nil && *o.Min < 1:
		return fmt.Errorf("--min %d: an autoscaler keeps at least 1 replica", *o.Min)
	case o.Max != nil && *o.Max < 1:
		return fmt.Errorf("--max %d: must be at least 1", *o.Max)
	case o.Min != nil && o.Max != nil && *o.Min > *o.Max:
		return fmt.Errorf("--min %d is above --max %d", *o.Min, *o.Max)
	}
	return nil
}

// Run scales within --timeout, showing progress as apply does.
func (o *ScaleOptions) Run(ctx context.Context) error {
	return runWithin(ctx, o.Timeout, "scale", "the platform's status records how far it got", o.run)
}

func (o *ScaleOptions) run(ctx context.Context) error {
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	// Without a catalog: the revision's snapshot carries its release entry, which
	// this run's catalog may lack (a --releases directory of whoever applied it).
	validator, err := spec.NewValidator(nil)
	if err != nil {
		return err
	}
	progress := o.newProgress(o.format)
	applier := apply.NewApplier(clients, o.Logger())
	applier.Observer = progress.Handle
	stopSpinner := progress.Start(ctx)
	res, err := upgrade.Scale{
		Applier: applier, Validator: validator,
		Namespace: o.namespace, Name: o.Name, Component: o.Component,
		Replicas: o.Replicas, MinReplicas: o.Min, MaxReplicas: o.Max,
		Options: o.ApplyFlags.Options(upgrade.ActionScale),
	}.Run(ctx)
	stopSpinner()
	if err != nil {
		return err
	}
	if o.format != printers.FormatText {
		return nil
	}
	platform := res.Namespace + "/" + res.Name
	if !res.Changed {
		fmt.Fprintf(o.Out, "OntoPlatform %s: %s already has %s: nothing written\n", platform, res.Component, res.Target)
		return nil
	}
	line := fmt.Sprintf("OntoPlatform %s: %s scaled (%s)", platform, res.Component, res.Change)
	if st := res.Apply.Status; st != nil {
		line += fmt.Sprintf(", %s, version %s, %s components ready", st.Phase, st.Version, st.ReadyComponents)
	}
	fmt.Fprintln(o.Out, line)
	return nil
}

// optionalInt32 is an int32 flag that stays nil unless given, so --replicas 0 is told
// apart from no --replicas.
type optionalInt32 struct{ p **int32 }

func (v *optionalInt32) String() string {
	if *v.p == nil {
		return ""
	}
	return strconv.Itoa(int(**v.p))
}

func (v *optionalInt32) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	i := int32(n)
	*v.p = &i
	return nil
}

func (v *optionalInt32) Type() string { return "int32" }

// completeScaleArgs offers platform NAMEs and COMPONENT names first, then the
// components after a NAME.
func (g *GlobalOptions) completeScaleArgs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var components []string
	for _, c := range (&v1alpha1.OntoPlatformSpec{}).Components() {
		components = append(components, c.Name)
	}
	switch {
	case len(args) == 0:
		names, _ := g.completePlatformNames(cmd, args, toComplete)
		return append(withPrefix(components, toComplete), names...), cobra.ShellCompDirectiveNoFileComp
	case len(args) == 1 && !slices.Contains(components, args[0]):
		return withPrefix(components, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// scaleComponents lists the component names for the help, indented, in lines of
// at most 80 columns.
func scaleComponents() string {
	var b, line strings.Builder
	for i, c := range (&v1alpha1.OntoPlatformSpec{}).Components() {
		word := c.Name
		if i > 0 {
			line.WriteString(",")
		}
		if line.Len()+1+len(word) > 78 {
			b.WriteString("  " + line.String() + "\n")
			line.Reset()
		} else if i > 0 {
			line.WriteString(" ")
		}
		line.WriteString(word)
	}
	b.WriteString("  " + line.String())
	return b.String()
}
