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
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// StatusOptions are the options of `kubectl onto status`.
type StatusOptions struct {
	*GlobalOptions
	OutputFlags
	PlatformArg
	// Wait until every component is ready, or Timeout.
	Wait    bool
	Timeout time.Duration
	// AllNamespaces lists every platform of the cluster, one row each.
	AllNamespaces bool
	// ClusterFleetFlags report every cluster of a fleet file.
	ClusterFleetFlags

	format printers.Format
}

// NewCmdStatus returns `kubectl onto status`.
func NewCmdStatus(g *GlobalOptions) *cobra.Command {
	o := &StatusOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show a platform's phase, conditions and each component's readiness",
		Long: `Status shows what the last run recorded (phase, installed version, conditions, an
upgrade in progress, the revision history) and each component's
readiness read from the live Deployments and StatefulSets, compared with the spec:
a workload scaled below the spec's replicas, running another version, or missing is
not ready.

NAME may be left out when the namespace holds one OntoPlatform. -A lists every
platform of the cluster, one row each, as kubectl get -A does (-o wide adds the
spec's version, generations and the components not ready).

The command exits 0 whenever it could report, ready or not. With --wait it watches
the workloads until every component is ready, and exits 1 naming the first component
that is not, and why, when --timeout passes. Once every component is ready after an
apply --wait=false, --wait records that run's outcome in the OntoPlatform's status
(Ready=True, observedGeneration), so kubectl wait and Flux see it too.

--fleet FLEET reports the fleet's platforms on every cluster of a fleet file (see
kubectl onto apply --help), one row each: CLUSTER WAVE PHASE VERSION READY AGE; -o
json prints each cluster's reports. It exits 1 when a cluster cannot be read within
--timeout.`,
		Example: `  kubectl onto status -n onto-system
  kubectl onto status onto-production -n onto-system -o json
  kubectl onto status --wait --timeout 10m     # in CI, after apply --wait=false
  kubectl onto status -A -o wide               # every platform of the cluster
  kubectl onto status --fleet fleet.yaml       # every cluster of a fleet
  kubectl onto status -n onto-system -o jsonpath='{.phase}{" "}{.readyComponents}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json", "yaml", "name", "wide", "jsonpath")
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "Wait until every component is ready; exit 1 if --timeout passes first")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 5*time.Minute, "How long --wait waits (with --fleet: how long the report may take)")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List every platform of the cluster, one row each")
	o.ClusterFleetFlags.AddFlags(cmd.Flags())
	return cmd
}

// Complete reads the name, the namespace and the output format.
func (o *StatusOptions) Complete(args []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	return o.PlatformArg.complete(o.GlobalOptions, args)
}

// Validate checks the flags.
func (o *StatusOptions) Validate() error {
	if err := o.ClusterFleetFlags.validate(o.GlobalOptions, FileFlags{}); err != nil {
		return err
	}
	if o.Fleet != "" && (o.Name != "" || o.AllNamespaces || o.Wait) {
		return fmt.Errorf("--fleet reports the fleet's platforms on each of its clusters: it takes no NAME, -A or --wait")
	}
	if o.AllNamespaces && o.Name != "" {
		return fmt.Errorf("a platform NAME and --all-namespaces exclude each other: a name is looked up in one namespace (-n)")
	}
	if o.AllNamespaces && o.Wait {
		return fmt.Errorf("--wait waits for one platform: name it (and -n), without --all-namespaces")
	}
	if o.Wait && o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive with --wait, not %s", o.Timeout)
	}
	return nil
}

// Run waits when asked, then reports.
func (o *StatusOptions) Run(ctx context.Context) error {
	if o.Fleet != "" {
		return o.statusClusters(ctx)
	}
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	obs := &status.Observer{Clients: clients, Now: time.Now}
	if o.AllNamespaces {
		reports, err := obs.ObserveAll(ctx, "")
		if err != nil {
			return err
		}
		view := printers.StatusListView{Items: reports, AllNamespaces: true, Wide: o.format == printers.FormatWide}
		return printers.Write(o.Out, o.format, o.Terminal(o.Out), view)
	}
	var waitErr error
	if o.Wait {
		wctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		progress := &printers.Progress{Out: o.ErrOut, Term: o.Terminal(o.ErrOut), Now: time.Now}
		waitErr = obs.Wait(wctx, o.namespace, o.Name, func(u health.Update) {
			progress.Handle(waitEvent(u))
		})
		if waitErr != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	r, err := obs.Observe(ctx, o.namespace, o.Name)
	if err != nil {
		return err
	}
	if o.Wait && waitErr == nil && r.Ready {
		// A run that did not wait (apply --wait=false) left its rollout Progressing:
		// now that it is healthy, record it, as the run would have.
		recorded, err := apply.RecordRolledOut(ctx, clients, r.Namespace, r.Name, r.ReadyComponents, time.Now())
		if err != nil {
			return err
		}
		if recorded {
			if r, err = obs.Observe(ctx, o.namespace, o.Name); err != nil {
				return err
			}
		}
	}
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), printers.StatusView{Report: r}); err != nil {
		return err
	}
	if waitErr != nil {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("%w (waited %s)", waitErr, o.Timeout)}
	}
	return nil
}

// currentNamespace is -n, else the kubeconfig context's namespace, else "default",
// the way kubectl resolves it.
func (g *GlobalOptions) currentNamespace() (string, error) {
	ns, _, err := g.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	return ns, nil
}

// waitEvent shows a readiness change during --wait as an apply progress line.
func waitEvent(u health.Update) apply.Event {
	return apply.Event{Type: apply.EventWaiting, Object: kube.Ref(u.Object), Ready: u.Ready, Message: u.Message}
}
