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
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// DoctorOptions are the options of `kubectl onto doctor`.
type DoctorOptions struct {
	*GlobalOptions
	OutputFlags
	PlatformArg
	FileFlags
	// Pre runs the preflight checks only, for a platform not installed yet (-f).
	Pre bool
	// Categories and Checks narrow the run; empty means all.
	Categories []string
	Checks     []string
	// Strict fails the run on a warning too.
	Strict bool
	// AllNamespaces diagnoses every platform of the cluster.
	AllNamespaces bool
	// Timeout bounds the gathering of each platform.
	Timeout  time.Duration
	Settings doctor.Settings

	format printers.Format
	flags  *pflag.FlagSet
}

// NewCmdDoctor returns `kubectl onto doctor`.
func NewCmdDoctor(g *GlobalOptions) *cobra.Command {
	o := &DoctorOptions{GlobalOptions: g, Settings: doctor.DefaultSettings()}
	cmd := &cobra.Command{
		Use:   "doctor [NAME]",
		Short: "Diagnose a platform, or check a cluster before a first install (--pre)",
		Long: `Doctor reads the cluster once and runs every check over what it read: the
platform's conditions, stopped upgrades and stuck locks, drift from the applied spec,
crash loops, OOM kills, image pulls, evictions, pods stuck Pending and why, unready or
pressured nodes, autoscalers without metrics, disruption budgets that block a drain,
and ingress certificates. Each finding names the object, what was seen, and a fix.

--pre -f FILE runs the preflight checks for a platform not installed yet: API server
version, permissions for every write apply makes, storage and ingress classes, kinds
the cluster must serve, capacity for the pods and their surge, quota headroom, and a
server dry-run of each workload (PodSecurity). It writes nothing.

Codes (ONTO-WRK-202...) are stable; --check selects some, --category a group
(pre, platform, workloads, nodes, scaling, tls). docs/doctor.md lists them all.

Exit status: 0 when no check found an error; 1 when one did (with --strict, a
warning too), or when the cluster could not be read.`,
		Example: `  kubectl onto doctor -n onto-system
  kubectl onto doctor -n onto-system -o junit > doctor.xml    # a CI gate
  kubectl onto doctor --pre -f platform.yaml                  # before a first install
  kubectl onto doctor --category workloads --check WRK-203 -o json
  kubectl onto doctor -A -o junit > doctor.xml                # every platform of the cluster`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	o.flags = cmd.Flags()
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json", "yaml", "junit")
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", "OntoPlatform file: the desired state for drift when the platform has no revision snapshot, and what --pre checks")
	cmd.Flags().BoolVar(&o.Pre, "pre", false, "Preflight checks only, for the platform of -f before its first install; writes nothing")
	cmd.Flags().StringSliceVar(&o.Categories, "category", nil, "Run only these categories (repeatable, comma-separated): "+strings.Join(categoryNames(), ", "))
	cmd.Flags().StringSliceVar(&o.Checks, "check", nil, "Run only these checks, by code (repeatable, comma-separated; ONTO- may be left out): WRK-203")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Diagnose every platform of the cluster (4 at a time); exit 1 when any fails")
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "Fail on warnings too (exit 1; in junit, warnings become failures)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 30*time.Second, "How long reading the cluster may take (per platform with -A)")
	cmd.Flags().DurationVar(&o.Settings.Since, "since", o.Settings.Since, "Report OOM kills that happened within this long")
	cmd.Flags().Int32Var(&o.Settings.MaxRestarts, "max-restarts", o.Settings.MaxRestarts, "Report containers restarted more often than this")
	cmd.Flags().DurationVar(&o.Settings.CertWarn, "cert-warn", o.Settings.CertWarn, "Warn about certificates expiring within this long")
	return cmd
}

func categoryNames() []string {
	var out []string
	for _, c := range doctor.Categories() {
		out = append(out, string(c))
	}
	return out
}

// Complete reads the name, the namespace and the output format.
func (o *DoctorOptions) Complete(args []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	return o.PlatformArg.complete(o.GlobalOptions, args)
}

// Validate checks the flags.
func (o *DoctorOptions) Validate() error {
	if o.Pre && o.Filename == "" {
		return fmt.Errorf("--pre checks a platform before it is installed: pass its file with -f platform.yaml")
	}
	if o.AllNamespaces && (o.Name != "" || o.Filename != "" || o.Pre) {
		return fmt.Errorf("--all-namespaces diagnoses every installed platform: leave out NAME, -f and --pre")
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, not %s", o.Timeout)
	}
	for _, c := range o.Categories {
		if !slices.Contains(categoryNames(), strings.ToLower(c)) {
			return fmt.Errorf("unknown --category %q: use one of %s", c, strings.Join(categoryNames(), ", "))
		}
	}
	codes := map[string]bool{}
	for _, c := range doctor.All() {
		codes[c.Code] = true
	}
	for _, c := range o.Checks {
		if code := normalCode(c); !codes[code] {
			return fmt.Errorf("unknown --check %q: codes look like WRK-203 or ONTO-WRK-203; kubectl onto doctor --help points to the list", c)
		}
	}
	if len(o.selected()) == 0 {
		// A gate that checks nothing must not pass.
		return fmt.Errorf("--pre, --category and --check together select no check (--pre runs the pre category and node pressure)")
	}
	return nil
}

func normalCode(c string) string {
	c = strings.ToUpper(c)
	if !strings.HasPrefix(c, "ONTO-") {
		c = "ONTO-" + c
	}
	return c
}

// Run gathers, checks and prints.
func (o *DoctorOptions) Run(ctx context.Context) error {
	if o.AllNamespaces {
		return o.runAll(ctx)
	}
	var file *platform.Loaded
	if o.Filename != "" {
		lp, err := o.loadPlatform(o.FileFlags)
		if err != nil {
			return err
		}
		file = &lp
	}
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	g := &doctor.Gatherer{Clients: clients, Settings: o.Settings, Pre: o.Pre, File: file, FileSource: platform.InputName(o.Filename), Checks: o.codes()}
	report, err := o.diagnose(ctx, g, o.namespace, o.Name)
	if err != nil {
		return err
	}
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.DoctorView{Report: report, Strict: o.Strict}); err != nil {
		return err
	}
	if !report.Success {
		return &ExitError{Code: exitFailure, Silent: true}
	}
	return nil
}

// diagnose gathers and checks one platform. A failed gather is a report with one fatal
// finding; other errors (no such platform, Ctrl-C) are returned.
func (o *DoctorOptions) diagnose(ctx context.Context, g *doctor.Gatherer, namespace, name string) (*doctor.Report, error) {
	var env *doctor.Env
	err := runWithin(ctx, o.Timeout, "doctor", "raise --timeout on a slow or large cluster", func(ctx context.Context) (err error) {
		env, err = g.Gather(ctx, namespace, name)
		return err
	})
	var gatherErr *doctor.GatherError
	switch {
	case errors.As(err, &gatherErr) && ctx.Err() == nil:
		server, kubeContext := connectionOf(o.flags)
		return doctor.Fatal(namespace+"/"+name, doctor.CodeAPIReachable, "API server reachable and readable",
			explainAPIError(err, server, kubeContext).Error(),
			"check the kubeconfig context and your permissions (kubectl auth can-i --list -n "+namespace+")"), nil
	case err != nil:
		return nil, err
	}
	return doctor.Evaluate(env, o.selected(), o.Strict), nil
}

// selected are the checks --pre, --category and --check leave.
func (o *DoctorOptions) selected() []doctor.Check {
	var cats []doctor.Category
	for _, c := range o.Categories {
		cats = append(cats, doctor.Category(strings.ToLower(c)))
	}
	return doctor.Select(doctor.All(), o.Pre, cats, o.Checks)
}

// codes are the codes of the selected checks, so gathering skips what none needs.
func (o *DoctorOptions) codes() map[string]bool {
	out := map[string]bool{}
	for _, c := range o.selected() {
		out[c.Code] = true
	}
	return out
}

// allNamespacesParallel is how many platforms doctor -A diagnoses at once: each
// gathers with its own bounded concurrency, so this bounds the requests in flight.
const allNamespacesParallel = 4

// runAll diagnoses every platform of the cluster.
func (o *DoctorOptions) runAll(ctx context.Context) error {
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	platforms, err := (&status.Observer{Clients: clients}).ObserveAll(ctx, "")
	if err != nil {
		return err
	}
	if len(platforms) == 0 {
		// A gate pointed at the wrong cluster must not pass.
		return fmt.Errorf("no OntoPlatform in any namespace of this cluster: nothing to diagnose (is this the right --context?)")
	}
	reports := make([]*doctor.Report, len(platforms))
	eg := errgroup.Group{}
	eg.SetLimit(allNamespacesParallel)
	for i, p := range platforms {
		eg.Go(func() error {
			g := &doctor.Gatherer{Clients: clients, Settings: o.Settings, Checks: o.codes()}
			r, err := o.diagnose(ctx, g, p.Namespace, p.Name)
			var notFound *inventory.NotFoundError
			switch {
			case errors.As(err, &notFound):
				return nil // deleted since the list
			case err != nil && ctx.Err() == nil:
				// One platform that cannot be diagnosed is that platform's failure,
				// not the run's.
				r = doctor.Fatal(p.Namespace+"/"+p.Name, doctor.CodeAPIReachable, "API server reachable and readable", err.Error(), "kubectl onto doctor "+p.Name+" -n "+p.Namespace+" -v 6")
			case err != nil:
				return err
			}
			reports[i] = r
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	reports = slices.DeleteFunc(reports, func(r *doctor.Report) bool { return r == nil })
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.DoctorListView{Reports: reports, Strict: o.Strict}); err != nil {
		return err
	}
	for _, r := range reports {
		if !r.Success {
			return &ExitError{Code: exitFailure, Silent: true}
		}
	}
	return nil
}
