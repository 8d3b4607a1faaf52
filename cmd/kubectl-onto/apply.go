/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// ApplyFlags are the knobs of every command that applies a platform (apply, and later
// upgrade, rollback and scale), so they are declared once.
type ApplyFlags struct {
	ForceConflicts bool
	Prune          bool
	MaxDeletes     int
	// Timeout bounds the whole run; PlaneTimeout each plane's wait for health.
	Timeout      time.Duration
	PlaneTimeout time.Duration
	Wait         bool
	// CrashLoopRestarts fails a plane early when a new pod crash-loops this often.
	CrashLoopRestarts int32
	// ForceVersion applies a downgrade or a version off the release's upgrade path.
	ForceVersion bool
	// Adopt makes existing objects of no platform with rendered names this platform's.
	Adopt bool
	// LockWait is how long to wait for another run's lock.
	LockWait time.Duration
	// LockTTL is how long the lock outlives this process should it die.
	LockTTL time.Duration
	// RetryBudget is how long transient API errors of a write are retried.
	RetryBudget time.Duration
}

// AddFlags registers the apply flags.
func (f *ApplyFlags) AddFlags(flags *pflag.FlagSet) {
	flags.BoolVar(&f.ForceConflicts, "force-conflicts", false, "Take over fields other field managers own instead of failing")
	flags.BoolVar(&f.Prune, "prune", true, "Delete objects of this platform it no longer renders (never PersistentVolumeClaims)")
	flags.IntVar(&f.MaxDeletes, "max-deletes", -1, "Refuse to run if the plan deletes more objects than this (-1: no limit)")
	flags.DurationVar(&f.Timeout, "timeout", 30*time.Minute, "How long the whole run may take (0: no limit)")
	flags.DurationVar(&f.PlaneTimeout, "plane-timeout", 5*time.Minute, "How long each plane may take to become healthy")
	flags.BoolVar(&f.Wait, "wait", true, "Wait for each plane to become healthy before starting the next")
	flags.Int32Var(&f.CrashLoopRestarts, "crashloop-restarts", 3, "Fail a plane as soon as a pod of the new revision has crash-looped this many times (0: wait out --plane-timeout)")
	flags.DurationVar(&f.LockWait, "lock-wait", 0, "How long to wait for another run of this platform to release its lock (0: fail at once)")
	flags.DurationVar(&f.LockTTL, "lock-ttl", apply.DefaultOptions().LockTTL, "How long the platform's lock outlives this run should it die (kill -9, lost machine); renewed every third of it")
	flags.DurationVar(&f.RetryBudget, "retry-budget", apply.DefaultOptions().RetryBudget, "How long a write failing transiently (API server restarting or overloaded, etcd leader change) is retried before the run fails (0: no retry)")
	flags.BoolVar(&f.Adopt, "adopt", false, "Make existing objects with rendered names that belong to no platform this platform's (they are then updated and pruned like its own)")
	flags.BoolVar(&f.ForceVersion, "force-version", false, "Apply a version older than the installed one, or outside its release's upgrade path")
}

// Validate checks the flags that have a floor.
func (f *ApplyFlags) Validate() error {
	switch {
	case f.LockTTL < 3*time.Second:
		return fmt.Errorf("--lock-ttl %s: must be at least 3s (the lease is renewed every third of it)", f.LockTTL)
	case f.RetryBudget < 0:
		return fmt.Errorf("--retry-budget %s: must not be negative", f.RetryBudget)
	}
	return nil
}

// Options turns the flags into apply options.
func (f *ApplyFlags) Options(action string) apply.Options {
	o := apply.DefaultOptions()
	o.ForceConflicts, o.Prune, o.MaxDeletes, o.PlaneTimeout, o.Wait, o.Action = f.ForceConflicts, f.Prune, f.MaxDeletes, f.PlaneTimeout, f.Wait, action
	o.CrashLoopRestarts, o.ForceVersion, o.Adopt, o.LockWait = f.CrashLoopRestarts, f.ForceVersion, f.Adopt, f.LockWait
	o.LockTTL, o.RetryBudget = f.LockTTL, f.RetryBudget
	o.Holder = apply.DefaultHolder()
	return o
}

// ApplyOptions are the options of `kubectl onto apply`.
type ApplyOptions struct {
	*GlobalOptions
	FileFlags
	ApplyFlags
	// UpgradeFlags tune the upgrade an apply becomes when the file changes the
	// installed spec.version.
	UpgradeFlags
	OutputFlags
	DryRunFlags
	// ParallelFlags tune a run over several platforms.
	ParallelFlags
	// ClusterFleetFlags run the apply on every cluster of a fleet file.
	ClusterFleetFlags
	// PlanFile applies a plan saved with `plan -o json`.
	PlanFile string

	format printers.Format
}

// NewCmdApply returns `kubectl onto apply`.
func NewCmdApply(g *GlobalOptions) *cobra.Command {
	o := &ApplyOptions{GlobalOptions: g}
	// --patch applies to this run only: say so, so nobody relies on it being stored.
	o.FileFlags.WarnUnstoredPatches = true
	o.FileFlags.Many = true
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR",
		Short: "Install or update the platform, plane by plane",
		Long: `Apply validates the file offline (a bad file writes nothing), installs or updates
the OntoPlatform CRD, stores the OntoPlatform, then applies each plane in order with
server-side apply (field manager kubectl-onto) and waits until the plane is healthy
before starting the next. Objects of this platform it no longer renders are pruned;
PersistentVolumeClaims never are. Generated Secrets are created once and never printed.
A second apply of the same file writes nothing.

A new spec.version of an installed platform is an upgrade: apply then moves it
component by component behind canaries, as kubectl onto upgrade -f does (see its
help; --canary-soak, --canary-timeout and --atomic tune it), and refuses a downgrade
or a version off the release's upgrade path unless --force-version.

Only one apply or uninstall of a platform runs at a time: a lease in its namespace is
the lock, and it expires if a run crashes.

A file of several documents, or a directory (its .yaml, .yml and .json files; -R for
its subdirectories), applies several platforms, each in its own namespace. Every file
is validated before anything is written. The CRD is written once, then the platforms
run --parallel at a time, each with its own lock, status and revision; their progress
lines start with namespace/name, and a table (NAMESPACE NAME RESULT CHANGES DURATION
ERROR) ends the run. One failure does not stop the others unless --fail-fast; the run
exits 1 naming the platforms that failed. With -o json the last line is
{"platforms": [...], "success": ...}.

--fleet FLEET applies to many clusters, in waves. The fleet file names the platform
file(s), the clusters by kubeconfig context grouped into ordered waves (a canary
first), maxParallel per wave, maxFailures, and per-cluster patches (the shape of
spec.patches, stored with that cluster's platform):

  apiVersion: onto.paas/v1alpha1
  kind: Fleet
  platforms: [platform.yaml]
  maxFailures: 0
  waves:
  - name: canary
    clusters: [{context: dev}]
  - name: production
    maxParallel: 2
    clusters:
    - context: prod-eu
    - context: prod-us
      patches: [{target: {kind: Deployment, name: gateway}, patch: "..."}]

Everything is validated offline first (an unknown context is an error before any
request). Each cluster is reached through its own context only. A wave's clusters
run side by side; a cluster passes when its apply succeeded and doctor finds no
error there; the next wave starts only when every cluster of the wave passed. More
failures than maxFailures stop the fleet: the later waves are not touched. A
cluster whose platform already runs the file's spec (Running, at its generation) is
up to date and only checked, so running the same command again resumes after the
last finished wave: the state is in the clusters' OntoPlatform statuses. Progress
lines start with the cluster's name; a table (CLUSTER WAVE RESULT CHANGES DURATION
ERROR) ends the run, or with -o json a last line {"clusters": [...], "success": ...}.
--dry-run=server plans every wave (as plan --fleet).`,
		Example: `  kubectl onto apply -f platform.yaml
  kubectl onto apply -f platform.yaml --dry-run=server        # plan, validated by the API server
  kubectl onto apply -f platform.yaml --dry-run               # offline: what would be applied, plane by plane
  kubectl onto apply -f platform.yaml -o json > events.jsonl  # progress as JSON lines, for CI
  kubectl onto apply -f platform.yaml --plan plan.json        # exactly the reviewed plan
  kubectl onto apply -f tenants/ --parallel 8                 # every platform of the directory, 8 at a time
  kubectl onto apply -f tenants.yaml --fail-fast              # several platforms; the first failure cancels the rest
  kubectl onto apply --fleet fleet.yaml                       # every cluster of the fleet, wave by wave, canary first`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	o.FileFlags.AddFlags(cmd.Flags())
	o.ApplyFlags.AddFlags(cmd.Flags())
	o.UpgradeFlags.AddFlags(cmd.Flags())
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json")
	o.ParallelFlags.AddFlags(cmd.Flags())
	o.ClusterFleetFlags.AddFlags(cmd.Flags())
	o.DryRunFlags.AddFlags(cmd.Flags(), "client lists what would be applied, plane by plane, without contacting the cluster; server prints the plan, each object validated by the API server, and fails where apply would")
	cmd.Flags().StringVar(&o.PlanFile, "plan", "", "Apply this plan (from plan -o json); refused if the cluster changed since it was made")
	return cmd
}

// Complete parses the output format.
func (o *ApplyOptions) Complete(_ []string) (err error) {
	o.format, err = o.OutputFlags.Format()
	return err
}

// Validate checks flag combinations.
func (o *ApplyOptions) Validate() error {
	if err := o.ClusterFleetFlags.validate(o.GlobalOptions, o.FileFlags); err != nil {
		return err
	}
	if err := o.FileFlags.Validate(); o.Fleet == "" && err != nil {
		return err
	}
	if err := o.ApplyFlags.Validate(); err != nil {
		return err
	}
	if err := o.ParallelFlags.Validate(); err != nil {
		return err
	}
	dryRun, err := o.Strategy()
	if err != nil {
		return err
	}
	if o.PlanFile != "" && dryRun != apply.DryRunNone {
		return fmt.Errorf("--plan and --dry-run together make no sense: the plan was already made (plan -o json is its dry run)")
	}
	return nil
}

// Run plans, then applies, within --timeout.
func (o *ApplyOptions) Run(ctx context.Context) error {
	return runWithin(ctx, o.Timeout, "apply", "the platform's status records how far it got", o.run)
}

func (o *ApplyOptions) run(ctx context.Context) error {
	if o.Fleet != "" {
		return o.runFleetOfClusters(ctx)
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
	if apply.DryRunStrategy(o.DryRun) == apply.DryRunClient {
		return o.clientDryRun(lp)
	}
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	d, err := liveDesired(ctx, clients, nil, &lp, o.ErrOut)
	if err != nil {
		return err
	}
	opts := o.ApplyFlags.Options("apply")
	opts.Release = &lp.Release
	if apply.DryRunStrategy(o.DryRun) == apply.DryRunServer {
		p, err := (&plan.Planner{Clients: clients, Adopt: opts.Adopt}).Plan(ctx, d)
		if err != nil {
			return err
		}
		if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.PlanView{Plan: p}); err != nil {
			return err
		}
		// The same checks as a real run, so a dry run in CI fails where apply would.
		if err := apply.Preflight(p, opts); err != nil {
			return err
		}
		return apply.CheckSecrets(p)
	}
	if o.PlanFile != "" {
		if opts.Saved, err = readPlan(o.PlanFile); err != nil {
			return err
		}
	} else if up, err := o.upgradeFor(ctx, clients, lp); err != nil || up != nil {
		if err != nil {
			return err
		}
		// A new spec.version of an installed platform moves component by component
		// behind canaries, as `kubectl onto upgrade -f` does, not every plane at once.
		what := "spec.version changes %s → %s: upgrading component by component"
		if up.Resuming {
			what = "an upgrade %s → %s is stopped and the file asks for its target: resuming it"
		}
		fmt.Fprintf(o.ErrOut, what+" (as kubectl onto upgrade -f; --canary-soak %s, --canary-timeout %s)\n",
			up.Installed, lp.Platform.Spec.Version, up.Upgrade.Options.CanarySoak, up.Upgrade.Options.CanaryTimeout)
		return o.runUpgrade(ctx, up.Upgrade)
	}
	progress := o.newProgress(o.format)
	applier := apply.NewApplier(clients, o.Logger())
	applier.Observer = progress.Handle
	stopSpinner := progress.Start(ctx)
	res, err := applier.Apply(ctx, d, opts)
	stopSpinner()
	if err != nil {
		return err
	}
	if o.format == printers.FormatText && res.Status != nil {
		fmt.Fprintf(o.Out, "OntoPlatform %s/%s: %s, version %s, %s components ready\n",
			d.Namespace, d.Platform.GetName(), res.Status.Phase, res.Status.Version, res.Status.ReadyComponents)
	}
	return nil
}

// upgradeFor returns the upgrade an apply of lp is (upgrade.ForApply), else nil.
func (o *ApplyOptions) upgradeFor(ctx context.Context, clients *kube.Clients, lp platform.Loaded) (*upgrade.Pending, error) {
	live, err := plan.LivePlatform(ctx, clients, nil, lp.Platform.Namespace, lp.Platform.Name)
	if err != nil {
		return nil, err
	}
	return upgrade.ForApply(apply.NewApplier(clients, o.Logger()), live, lp, o.upgradeOptions()), nil
}

// upgradeOptions are the options of the upgrade an apply becomes: its --force-version
// is upgrade's --force.
func (o *ApplyOptions) upgradeOptions() upgrade.Options {
	opts := o.UpgradeFlags.options(o.ApplyFlags)
	opts.Force, opts.ForceFlag = o.ForceVersion, "--force-version"
	return opts
}

// runUpgrade runs u with apply's progress and final line.
func (g *GlobalOptions) runUpgradeWith(ctx context.Context, u *upgrade.Upgrade, format printers.Format) error {
	progress := g.newProgress(format)
	u.Applier.Observer = progress.Handle
	stop := progress.Start(ctx)
	res, err := u.Run(ctx)
	stop()
	if err != nil {
		return err
	}
	if format == printers.FormatText {
		fmt.Fprintf(g.Out, "OntoPlatform %s/%s: %s → %s, %d components moved", u.Namespace, u.Name, res.From, res.To, len(res.Steps))
		if res.Status != nil {
			fmt.Fprintf(g.Out, ", %s, %s components ready", res.Status.Phase, res.Status.ReadyComponents)
		}
		fmt.Fprintln(g.Out)
	}
	return nil
}

func (o *ApplyOptions) runUpgrade(ctx context.Context, u *upgrade.Upgrade) error {
	return o.runUpgradeWith(ctx, u, o.format)
}

// clientDryRun lists what apply would write, plane by plane, from the file alone: it
// sends nothing to the cluster, not even a dry run. -o json prints the objects.
func (o *ApplyOptions) clientDryRun(lp platform.Loaded) error {
	d, err := lp.Desired()
	if err != nil {
		return err
	}
	// In apply's order: the CRD and the OntoPlatform first, then each plane.
	planes := []printers.PlaneObjects{{Plane: string(plan.PlatformPlane), Objects: []*unstructured.Unstructured{d.CRD, d.Platform}}}
	for _, p := range d.Planes {
		planes = append(planes, printers.PlaneObjects{Plane: string(p.Name), Objects: p.Objects})
	}
	if o.format == printers.FormatJSON {
		return printers.WriteObjectsJSON(o.Out, planes)
	}
	if err := printers.WriteDryRunObjects(o.Out, o.Terminal(o.Out), planes); err != nil {
		return err
	}
	fmt.Fprintln(o.ErrOut, "dry run (client): nothing was sent to the cluster; --dry-run=server plans against it and checks what apply would refuse")
	return nil
}

// newProgress prints run events: lines (and a spinner on a terminal) on stderr, or JSON
// lines on stdout with -o json, where a CI job reads results.
func (g *GlobalOptions) newProgress(format printers.Format) *printers.Progress {
	if format == printers.FormatJSON {
		return &printers.Progress{Out: g.Out, JSON: true, Now: time.Now}
	}
	return &printers.Progress{Out: g.ErrOut, Term: g.Terminal(g.ErrOut), Now: time.Now}
}

func readPlan(path string) (*plan.Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", path, err)
	}
	return &p, nil
}
