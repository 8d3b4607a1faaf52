/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// WatchOptions are the options of `kubectl onto watch`.
type WatchOptions struct {
	*GlobalOptions
	// Namespaces to watch; AllNamespaces watches every one. Neither: -n or the
	// context's namespace.
	Namespaces    []string
	AllNamespaces bool
	Drift         string
	// AuditLog is a file for one JSON line per change ("-": stdout).
	AuditLog                string
	MaxConcurrentReconciles int
	LeaderElect             bool
	LeaderElectionNamespace string
	MetricsBindAddress      string
	HealthProbeBindAddress  string
	LockTTL                 time.Duration
	NodeGrace               time.Duration
	// Resync is how often a healthy platform is checked.
	Resync time.Duration
	// Upgrade are the canary settings of the upgrades the watch runs.
	Upgrade UpgradeFlags

	namespaces []string
}

// NewCmdWatch returns `kubectl onto watch`.
func NewCmdWatch(g *GlobalOptions) *cobra.Command {
	o := &WatchOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Keep platforms at their declared state: repair drift, finish rollouts, uninstall on delete",
		Long: `Watch runs the reconciler: it watches the OntoPlatforms of the namespace (-n,
--namespaces, or -A for all) and the objects they own, and brings each platform back
to its declared state: an object deleted or changed by hand is applied again (only the
fields this tool applies; autoscalers keep their replicas), a changed spec is applied
plane by plane, a new spec.version is upgraded component by component (one component
per pass, behind a canary with --canary-soak and --canary-timeout, so other platforms
are repaired in between; status.upgrade.driver says the watch goes on with it), and
deleting an OntoPlatform uninstalls it in reverse plane order (volumes and credentials
kept).

It writes with the same code, field manager (kubectl-onto) and lock as the CLI: while
a CLI run holds a platform's lock, watch leaves that platform alone and comes back
after it. It never writes the CRD or an OntoPlatform's spec; a failed upgrade is not
retried by itself (kubectl onto upgrade resumes it, or rollback undoes it).

A healthy platform is checked every 5 minutes (--resync), from the watch's cache; an
object's change brings it back at once. --drift=report records drift (Events, --audit-log) without repairing it.
--leader-elect lets several replicas run, one of them writing. Ctrl-C stops it.

Its informers' watch streams are never compressed: a gzip stream holds memory here
and in the API server for as long as it is open; --disable-compression applies to
the rest. Over many tenant namespaces, -A takes less memory than --namespaces: one
stream and cache per kind, not one per kind and namespace.`,
		Example: `  kubectl onto watch -n onto-system
  kubectl onto watch -A --audit-log audit.jsonl
  kubectl onto watch -A --leader-elect --metrics-bind-address :8080 --health-probe-bind-address :8081   # in-cluster
  kubectl onto watch -n onto-system --drift=report`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Namespaces, "namespaces", nil, "Namespaces to watch (comma-separated); default -n or the context's namespace")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Watch every namespace")
	f.StringVar(&o.Drift, "drift", string(controller.DriftRepair), "repair|report: what to do about objects that differ from the applied spec")
	f.StringVar(&o.AuditLog, "audit-log", "", "Append one JSON line per change to this file (- is stdout)")
	f.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "Platforms reconciled at once")
	f.BoolVar(&o.LeaderElect, "leader-elect", false, "Run as one of several replicas: only the leader writes")
	f.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the first watched namespace)")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "0", "Serve Prometheus metrics here (:8080); 0 is off")
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", "0", "Serve /healthz and /readyz here (:8081); 0 is off")
	f.DurationVar(&o.LockTTL, "lock-ttl", apply.DefaultOptions().LockTTL, "How long a platform's lock lives without renewal, should this process die")
	f.DurationVar(&o.Resync, "resync", 5*time.Minute, "Check each healthy platform this often (±10%), besides the changes of its objects")
	f.DurationVar(&o.NodeGrace, "node-grace", controller.DefaultNodeGrace, "Evict a platform's Deployment pods from a node NotReady for longer than this (StatefulSet pods are only reported)")
	o.Upgrade.AddFlags(f) // for the upgrades it runs when a spec.version changes
	cmd.AddCommand(NewCmdWatchInstall(g))
	return cmd
}

// Complete resolves the namespaces.
func (o *WatchOptions) Complete(_ []string) error {
	switch {
	case o.AllNamespaces:
	case len(o.Namespaces) > 0:
		o.namespaces = o.Namespaces
	default:
		ns, err := o.currentNamespace()
		if err != nil {
			return err
		}
		o.namespaces = []string{ns}
	}
	return nil
}

// Validate checks the flags.
func (o *WatchOptions) Validate() error {
	if o.AllNamespaces && len(o.Namespaces) > 0 {
		return fmt.Errorf("--all-namespaces and --namespaces exclude each other")
	}
	switch controller.DriftMode(o.Drift) {
	case controller.DriftRepair, controller.DriftReport:
	default:
		return fmt.Errorf("invalid --drift %q: use repair or report", o.Drift)
	}
	if o.Upgrade.CanarySoak < 0 || o.Upgrade.CanaryTimeout <= 0 {
		return fmt.Errorf("--canary-soak must be 0 or positive and --canary-timeout positive, not %s and %s", o.Upgrade.CanarySoak, o.Upgrade.CanaryTimeout)
	}
	if o.Resync < 10*time.Second {
		return fmt.Errorf("--resync %s: must be at least 10s", o.Resync)
	}
	if o.MaxConcurrentReconciles < 1 {
		return fmt.Errorf("--max-concurrent-reconciles must be at least 1, not %d", o.MaxConcurrentReconciles)
	}
	if o.LeaderElect && o.LeaderElectionNamespace == "" && len(o.namespaces) == 0 {
		return fmt.Errorf("--leader-elect with --all-namespaces needs --leader-election-namespace for its Lease")
	}
	return nil
}

// watchGCPercent is the watch's GOGC when the environment sets none. Its heap is
// mostly the informer cache, which lives as long as the process: Go's default (100)
// lets the heap grow to twice that before collecting. 50 keeps less resident for a
// little more CPU in the first passes (docs/benchmarks.md).
const watchGCPercent = 50

// setWatchGC sets the watch's GC target unless GOGC is set, which wins as for any Go
// program (the runtime read it at start).
func setWatchGC(getenv func(string) string) {
	if getenv != nil && getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(watchGCPercent)
}

// Run runs the reconciler until ctx ends (Ctrl-C, SIGTERM).
func (o *WatchOptions) Run(ctx context.Context) error {
	setWatchGC(o.getenv)
	// Each platform reconciled at once gets one CLI run's rate limits: with one
	// shared 50 QPS limiter, the first passes of many platforms (a plan and an apply
	// each) queued behind it, about 2 s per platform.
	o.clientShare = o.MaxConcurrentReconciles
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	// The informers' streams stay open as long as the watch runs, one per kind and
	// watched namespace. The API server gzips a stream that starts with its list
	// (WatchListCompression), and each one then holds a decompressor here (about 40 KB)
	// and a compressor there, for events of a few KB (docs/benchmarks.md). The plans'
	// and applies' one-shot lists (clients) stay compressed.
	cfg = rest.CopyConfig(cfg)
	cfg.DisableCompression = true
	catalog, err := o.Catalog()
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if o.Verbosity > 0 {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(o.ErrOut, &slog.HandlerOptions{Level: level}))
	ctrl.SetLogger(logr.FromSlogHandler(log.Handler()))

	var audit *controller.AuditLog
	switch o.AuditLog {
	case "":
	case "-":
		audit = controller.NewAuditLog(o.Out)
	default:
		f, err := os.OpenFile(o.AuditLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer f.Close()
		audit = controller.NewAuditLog(io.Writer(f))
	}
	electionNS := o.LeaderElectionNamespace
	if electionNS == "" && len(o.namespaces) > 0 {
		electionNS = o.namespaces[0]
	}
	holder := "watch/" + apply.DefaultHolder()
	mgr, err := controller.NewManager(cfg, clients, controller.Options{
		Namespaces: o.namespaces, Drift: controller.DriftMode(o.Drift), MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		LeaderElect: o.LeaderElect, LeaderElectionNamespace: electionNS,
		MetricsBindAddress: o.MetricsBindAddress, HealthProbeBindAddress: o.HealthProbeBindAddress,
		Audit: audit, Holder: holder, LockTTL: o.LockTTL, Catalog: catalog, Log: log, NodeGrace: o.NodeGrace,
		HealthyRequeue: o.Resync,
		Upgrade:        &controller.UpgradeSettings{CanarySoak: o.Upgrade.CanarySoak, CanaryTimeout: o.Upgrade.CanaryTimeout, Atomic: o.Upgrade.Atomic},
	})
	if err != nil {
		return err
	}
	where := "every namespace"
	if len(o.namespaces) > 0 {
		where = "namespaces " + strings.Join(o.namespaces, ", ")
	}
	log.Info("watching OntoPlatforms", "in", where, "drift", o.Drift, "holder", holder)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	if o.LeaderElect && o.LeaderElectionNamespace == "" {
		// The Lease lives in a platform's namespace (the first watched): a clean exit
		// that released it removes it, so nothing of the watch stays behind there.
		controller.RemoveReleasedLease(context.WithoutCancel(ctx), clients.Kube, electionNS, log)
	}
	return nil
}
