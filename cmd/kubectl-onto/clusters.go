/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/multicluster"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// ClusterFleetFlags hold --fleet: the command runs on every cluster of a fleet file.
type ClusterFleetFlags struct {
	Fleet string
}

// AddFlags registers --fleet.
func (f *ClusterFleetFlags) AddFlags(flags *pflag.FlagSet) {
	flags.StringVar(&f.Fleet, "fleet", "", "Fleet file: run on every cluster it names (by kubeconfig context), wave by wave; its platform files replace -f")
}

// validate refuses, with --fleet, the flags that would pick one cluster or one
// platform: the fleet file names both, and each cluster's credentials come from its
// own context only.
func (f *ClusterFleetFlags) validate(g *GlobalOptions, files FileFlags) error {
	if f.Fleet == "" {
		return nil
	}
	if files.Filename != "" {
		return fmt.Errorf("--fleet and -f both name the platform: the fleet file's platforms: field lists its platform files")
	}
	if len(files.PatchFiles) > 0 {
		return fmt.Errorf("--patch cannot go with --fleet: put the patches in the platform file's spec.patches, or a cluster's own under its patches: in the fleet file")
	}
	cf := g.ConfigFlags
	for name, v := range map[string]*string{"context": cf.Context, "cluster": cf.ClusterName, "user": cf.AuthInfoName,
		"server": cf.APIServer, "token": cf.BearerToken, "as": cf.Impersonate} {
		if v != nil && *v != "" {
			return fmt.Errorf("--%s cannot go with --fleet: each cluster of the fleet is reached through its own kubeconfig context, with its own credentials", name)
		}
	}
	return nil
}

// clusterFleet is a loaded fleet: the file, the kubeconfig it names contexts of, and
// each cluster's platforms (the fleet's platform files with the cluster's patches).
type clusterFleet struct {
	*multicluster.Fleet
	raw clientcmdapi.Config
	// platforms holds each cluster's platforms, by context.
	platforms map[string][]platform.Loaded
}

// loadClusterFleet reads and validates the fleet file and its platform files, all
// offline: an unknown context, a bad platform file or a per-cluster patch that
// matches nothing is an error before any request.
func (g *GlobalOptions) loadClusterFleet(path string) (*clusterFleet, error) {
	raw, err := g.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	f, err := multicluster.Load(path, slices.Sorted(maps.Keys(raw.Contexts)))
	if err != nil {
		return nil, err
	}
	v, err := g.Validator()
	if err != nil {
		return nil, err
	}
	load := func(path string) ([]platform.Loaded, error) {
		return g.loadPlatforms(FileFlags{Filename: path, Many: true})
	}
	platforms, err := f.LoadPlatforms(load, v)
	if err != nil {
		return nil, err
	}
	return &clusterFleet{Fleet: f, raw: raw, platforms: platforms}, nil
}

// clusterClient is the connection to one cluster of a fleet.
type clusterClient struct {
	*kube.Clients
	requests atomic.Int64
}

// connect builds clients from the member's kubeconfig context alone: its server,
// credentials and TLS settings, nothing of the others (nor of --context and the like,
// which --fleet refuses). The requests sent through them are counted.
func (cf *clusterFleet) connect(g *GlobalOptions, m multicluster.Member) (*clusterClient, error) {
	overrides := &clientcmd.ConfigOverrides{}
	if t := g.ConfigFlags.Timeout; t != nil {
		// --request-timeout is no cluster's setting: it applies to each.
		overrides.Timeout = *t
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(cf.raw, m.Context, overrides, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %s: %w", m.Context, err)
	}
	cc := &clusterClient{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			cc.requests.Add(1)
			return rt.RoundTrip(r)
		})
	})
	if levels := requestLogLevels(g.Verbosity); len(levels) > 0 {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return transport.NewDebuggingRoundTripper(rt, levels...) })
	}
	if cc.Clients, err = kube.New(cfg); err != nil {
		return nil, err
	}
	return cc, nil
}

// explain is explainAPIError for a cluster of the fleet: its context's server, and
// what to check there (--context and --kubeconfig pick nothing with --fleet).
func (cf *clusterFleet) explain(err error, m multicluster.Member) error {
	server := ""
	if c, ok := cf.raw.Contexts[m.Context]; ok && cf.raw.Clusters[c.Cluster] != nil {
		server = cf.raw.Clusters[c.Cluster].Server
	}
	err = explainAPIError(err, server, m.Context)
	var e *explainedError
	if errors.As(err, &e) && strings.HasSuffix(e.msg, connectionHint) {
		return &explainedError{msg: strings.TrimSuffix(e.msg, connectionHint) + fleetConnectionHint, err: e.err}
	}
	return err
}

// fleetConnectionHint is connectionHint for a cluster of a fleet.
const fleetConnectionHint = "check that context's server and credentials in the kubeconfig, or that the cluster is running"

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// clusterNotes is stderr with the cluster's name before each line.
func (s fleetStreams) clusterNotes() io.Writer {
	return &prefixWriter{w: s.errOut, prefix: s.term.Bold.Render(s.cluster) + " "}
}

// clusterStep is the work of a fleet command on one cluster: it fills the row.
type clusterStep func(ctx context.Context, m multicluster.Member, cc *clusterClient, s fleetStreams, row *printers.ClusterRow) error

// runClusterFleet runs step on every cluster of the fleet, wave by wave, and builds
// the view. A cluster that cannot be reached fails at its first request, bounded by
// the command's --timeout.
func (g *GlobalOptions) runClusterFleet(ctx context.Context, cf *clusterFleet, action string, format printers.Format, allWaves bool, step clusterStep) (printers.ClusterFleetView, *multicluster.Report[printers.ClusterRow]) {
	streams := g.fleetStreams(format)
	notes := streams.errOut
	runner := &multicluster.Runner[printers.ClusterRow]{
		AllWaves: allWaves,
		WaveStarted: func(i int, w multicluster.Wave) {
			names := make([]string, len(w.Clusters))
			for j, c := range w.Clusters {
				names[j] = c.DisplayName()
			}
			fmt.Fprintf(notes, "%s wave %d/%d %s: %s\n", action, i+1, len(cf.Waves), w.Name, strings.Join(names, ", "))
		},
		WaveDone: func(i int, w multicluster.Wave, results []multicluster.Result[printers.ClusterRow], stop bool) {
			var failed []string
			for _, r := range results {
				if r.Outcome != multicluster.Succeeded {
					failed = append(failed, r.DisplayName())
				}
			}
			switch {
			case len(failed) == 0:
				fmt.Fprintf(notes, "%s wave %d/%d %s passed\n", action, i+1, len(cf.Waves), w.Name)
			case stop:
				fmt.Fprintf(notes, "%s wave %d/%d %s failed (%s): the fleet stops; the later waves are not touched\n", action, i+1, len(cf.Waves), w.Name, strings.Join(failed, ", "))
			default:
				fmt.Fprintf(notes, "%s wave %d/%d %s: %s did not pass\n", action, i+1, len(cf.Waves), w.Name, strings.Join(failed, ", "))
			}
		},
		Do: func(ctx context.Context, m multicluster.Member) (row printers.ClusterRow, err error) {
			row = printers.ClusterRow{Cluster: m.DisplayName(), Context: m.Context, Wave: m.Wave}
			s := streams
			s.cluster = m.DisplayName()
			defer func() {
				if err != nil && ctx.Err() == nil {
					err = cf.explain(err, m)
					fmt.Fprintf(s.clusterNotes(), "%s%s\n", s.term.Fail.Render("error: "), err.Error())
				}
			}()
			cc, err := cf.connect(g, m)
			if err != nil {
				return row, err
			}
			defer func() { row.Requests = int(cc.requests.Load()) }()
			return row, step(ctx, m, cc, s, &row)
		},
	}
	rep := runner.Run(ctx, cf.Fleet)
	view := printers.ClusterFleetView{Fleet: cf.Path, Action: action, StoppedAt: rep.StoppedAt, Success: rep.Success()}
	for _, r := range rep.Results {
		row := r.Value
		row.Cluster, row.Context, row.Wave = r.DisplayName(), r.Context, r.Wave
		row.DurationSeconds = r.Duration.Seconds()
		switch {
		case r.Outcome == multicluster.Succeeded && row.Result == "":
			row.Result = string(r.Outcome)
		case r.Outcome != multicluster.Succeeded:
			row.Result = string(r.Outcome)
		}
		switch r.Outcome {
		case multicluster.Failed:
			row.Error = r.Err.Error()
		case multicluster.Cancelled:
			row.Error = cancelledMessage(r.Err)
		case multicluster.NotStarted:
			row.Error = "wave " + rep.StoppedAt + " failed"
		}
		view.Clusters = append(view.Clusters, row)
	}
	return view, rep
}

// clusterFleetError is the error of a fleet run that did not succeed, naming the
// clusters that failed and where the fleet stopped.
func clusterFleetError(ctx context.Context, view printers.ClusterFleetView) error {
	if view.Success {
		return nil
	}
	var failed, cancelled, notStarted []string
	for _, c := range view.Clusters {
		switch c.Result {
		case string(multicluster.Failed):
			failed = append(failed, c.Cluster)
		case string(multicluster.Cancelled):
			cancelled = append(cancelled, c.Cluster)
		case string(multicluster.NotStarted):
			notStarted = append(notStarted, c.Cluster)
		}
	}
	var parts []string
	n := len(view.Clusters)
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d clusters failed: %s", len(failed), n, strings.Join(failed, ", ")))
	}
	if len(cancelled) > 0 {
		parts = append(parts, fmt.Sprintf("%d cancelled: %s", len(cancelled), strings.Join(cancelled, ", ")))
	}
	if len(notStarted) > 0 {
		parts = append(parts, fmt.Sprintf("the fleet stopped after wave %s; not started: %s", view.StoppedAt, strings.Join(notStarted, ", ")))
	}
	err := errors.New(strings.Join(parts, "; "))
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", err, ctx.Err())
	}
	return &ExitError{Code: exitFailure, Err: err}
}
