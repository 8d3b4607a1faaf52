/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/parallel"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// runMany applies several platforms, --parallel at a time. The clients (and so
// discovery and the RESTMapper) are shared, and the CRD is written once before them;
// each platform then runs apply's own path (its lock, inventory, status and revision),
// rendered only when its turn comes. Progress lines carry the platform's name; a table
// (or, with -o json, one JSON line {"platforms": [...], "success": ...}) ends the run.
func (o *ApplyOptions) runMany(ctx context.Context, loaded []platform.Loaded) error {
	dryRun, _ := o.Strategy()
	switch {
	case o.PlanFile != "":
		return fmt.Errorf("--plan applies the saved plan of one platform; %s holds %d", platform.InputName(o.Filename), len(loaded))
	case dryRun == apply.DryRunClient:
		return fmt.Errorf("--dry-run=client takes one platform; %s holds %d: kubectl onto render -f %s prints what they all become", platform.InputName(o.Filename), len(loaded), o.Filename)
	case dryRun == apply.DryRunServer:
		return fmt.Errorf("--dry-run=server takes one platform; %s holds %d: kubectl onto plan -f %s plans each against the cluster", platform.InputName(o.Filename), len(loaded), o.Filename)
	}
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	crd, err := plan.CRD()
	if err != nil {
		return err
	}
	if _, err := apply.NewApplier(clients, o.Logger()).ApplyCRD(ctx, crd, o.ApplyFlags.Options("apply")); err != nil {
		return err
	}
	streams := o.fleetStreams(o.format)
	shared := sharedLists(clients, loaded)
	results := runParallel(ctx, loaded, o.ParallelFlags, streams, func(ctx context.Context, lp platform.Loaded) (printers.FleetPlatform, error) {
		live, err := plan.LivePlatform(ctx, clients, shared, lp.Platform.Namespace, lp.Platform.Name)
		if err != nil {
			return printers.FleetPlatform{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name}, err
		}
		return o.applyOneOfMany(ctx, clients, shared, live, lp, streams)
	})
	view := fleetView(loaded, results)
	if o.format == printers.FormatJSON {
		// apply -o json is a stream of JSON lines: the summary is its last line.
		data, err := json.Marshal(view)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(streams.out, "%s\n", data); err != nil {
			return err
		}
	} else if err := printers.Write(o.Out, printers.FormatText, o.Terminal(o.Out), view); err != nil {
		return err
	}
	return fleetError(ctx, loaded, results)
}

// applyOneOfMany is apply of one platform of several, over live, the installed
// platform: an upgrade when the file changes its installed version, as for one
// platform.
func (o *ApplyOptions) applyOneOfMany(ctx context.Context, clients *kube.Clients, shared *plan.SharedLists, live *v1alpha1.OntoPlatform, lp platform.Loaded, streams fleetStreams) (printers.FleetPlatform, error) {
	ref := lp.Platform.Namespace + "/" + lp.Platform.Name
	row := printers.FleetPlatform{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name}
	notes := streams.notes(ref)
	applier := apply.NewApplier(clients, o.Logger())
	applier.Observer = streams.progress(ref).Handle
	opts := o.ApplyFlags.Options("apply")
	opts.Shared = shared
	// Rendered now, not with the others up front: memory grows with --parallel, not
	// with the number of platforms.
	run, err := upgrade.NewApplyRun(applier, live, lp, opts, o.upgradeOptions())
	if run != nil {
		for _, n := range run.Notes {
			fmt.Fprintln(notes, n)
		}
	}
	if err != nil {
		return row, err
	}
	res, err := run.Run(ctx)
	row.Changes, row.Status = res.Changes, fleetStatus(res.Status)
	return row, err
}

// runMany plans several platforms, --parallel at a time, with shared clients; each is
// rendered when its turn comes. The plans print one after the other, in the file's
// order, then a table; -o json prints {"platforms": [{..., "plan": ...}], "success"}.
func (o *PlanOptions) runMany(ctx context.Context, loaded []platform.Loaded) error {
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	streams := o.fleetStreams(printers.FormatText)
	keepObjects := o.format != printers.FormatText
	shared := sharedLists(clients, loaded)
	results := runParallel(ctx, loaded, o.ParallelFlags, streams, func(ctx context.Context, lp platform.Loaded) (printers.FleetPlatform, error) {
		row := printers.FleetPlatform{Namespace: lp.Platform.Namespace, Name: lp.Platform.Name}
		d, err := liveDesired(ctx, clients, shared, &lp, streams.notes(lp.Platform.Namespace+"/"+lp.Platform.Name))
		if err != nil {
			return row, err
		}
		p, err := (&plan.Planner{Clients: clients, Adopt: o.Adopt, Shared: shared}).Plan(ctx, d)
		if err != nil {
			return row, err
		}
		if !keepObjects {
			// The text shows no object, and a plan keeps every object it creates or
			// updates: dropping them keeps what the run holds small per platform.
			p.DropObjects()
		}
		row.Plan, row.Changes = p, p.Summary.Create+p.Summary.Update+p.Summary.Delete+p.Summary.Replace
		return row, nil
	})
	view := fleetView(loaded, results)
	view.ShowUnchanged = o.ShowUnchanged
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), view); err != nil {
		return err
	}
	if err := fleetError(ctx, loaded, results); err != nil {
		return err
	}
	if o.DetailedExitCode && slices.ContainsFunc(view.Platforms, func(p printers.FleetPlatform) bool { return p.Changes > 0 }) {
		return &ExitError{Code: exitChanges}
	}
	return nil
}

// sharedLists are the live objects of the platforms of loaded, listed once for all of
// them when their plans need them.
func sharedLists(clients *kube.Clients, loaded []platform.Loaded) *plan.SharedLists {
	ids := make([]string, len(loaded))
	for i, lp := range loaded {
		ids[i] = inventory.ID(lp.Platform.Namespace, lp.Platform.Name)
	}
	return plan.NewSharedLists(clients, ids)
}

// runParallel runs fn for each platform, flags.Parallel at a time. A platform's error is
// printed in full, with its name, as soon as it fails, where its progress is; the
// table at the end keeps its first line.
func runParallel(ctx context.Context, loaded []platform.Loaded, flags ParallelFlags, s fleetStreams, fn func(context.Context, platform.Loaded) (printers.FleetPlatform, error)) []parallel.Result[printers.FleetPlatform] {
	return parallel.RunAll(ctx, loaded, flags.Parallel, flags.FailFast, func(ctx context.Context, lp platform.Loaded) (printers.FleetPlatform, error) {
		row, err := fn(ctx, lp)
		// A cancelled platform's error is the cancellation, said in the table.
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(s.notes(lp.Platform.Namespace+"/"+lp.Platform.Name), "%s%s\n", s.term.Fail.Render("error: "), explainAPIError(err, "", "").Error())
		}
		return row, err
	})
}

// fleetStreams are where a run over several platforms prints: their progress
// interleaves, a line at a time, each naming its platform.
type fleetStreams struct {
	// out takes the progress: stderr, or stdout as JSON lines with apply -o json.
	out  io.Writer
	json bool
	// errOut takes notes and each platform's error, in full.
	errOut io.Writer
	term   *printers.Terminal
	// cluster names the cluster of a run over a fleet of clusters (--fleet): it
	// begins every line, before the platform.
	cluster string
}

// fleetStreams returns the streams for format; both are locked, since the platforms
// write from their own goroutines.
func (g *GlobalOptions) fleetStreams(format printers.Format) fleetStreams {
	errOut := &lockedWriter{w: g.ErrOut}
	// No spinner: one redrawn status line cannot show several platforms.
	term := *g.Terminal(g.ErrOut)
	term.Interactive = false
	s := fleetStreams{out: errOut, errOut: errOut, term: &term}
	if format == printers.FormatJSON {
		s.out, s.json = &lockedWriter{w: g.Out}, true
	}
	return s
}

// progress prints one platform's run events.
func (s fleetStreams) progress(ref string) *printers.Progress {
	return &printers.Progress{Out: s.out, Term: s.term, JSON: s.json, Now: time.Now, Platform: ref, Cluster: s.cluster}
}

// notes is stderr with the platform's name before each line.
func (s fleetStreams) notes(ref string) io.Writer {
	prefix := s.term.Bold.Render(ref) + " "
	if s.cluster != "" {
		prefix = s.term.Bold.Render(s.cluster) + " " + prefix
	}
	return &prefixWriter{w: s.errOut, prefix: prefix}
}

// fleetView is the table of a run: each platform's row, its result, duration and
// error.
func fleetView(loaded []platform.Loaded, results []parallel.Result[printers.FleetPlatform]) printers.FleetView {
	view := printers.FleetView{Success: true}
	for i, r := range results {
		row := r.Value
		row.Namespace, row.Name = loaded[i].Platform.Namespace, loaded[i].Platform.Name
		row.Result, row.DurationSeconds = string(r.Outcome), r.Duration.Seconds()
		switch r.Outcome {
		case parallel.Failed:
			row.Error = explainAPIError(r.Err, "", "").Error()
		case parallel.Cancelled:
			row.Error = cancelledMessage(r.Err)
		}
		view.Success = view.Success && r.Outcome == parallel.Succeeded
		view.Platforms = append(view.Platforms, row)
	}
	return view
}

// cancelledMessage says why a platform was cancelled.
func cancelledMessage(err error) string {
	switch {
	case errors.Is(err, parallel.ErrFailFast):
		return "cancelled: another platform failed (--fail-fast)"
	case errors.Is(err, context.DeadlineExceeded):
		return "cancelled: --timeout"
	}
	return "cancelled: interrupted"
}

// fleetError is the error of a run with failed or cancelled platforms, naming them:
// "2 of 5 platforms failed: a/x, b/y". A run stopped by Ctrl-C or --timeout wraps
// that cause, so the command reports it as for one platform.
func fleetError(ctx context.Context, loaded []platform.Loaded, results []parallel.Result[printers.FleetPlatform]) error {
	var failed, cancelled []string
	for i, r := range results {
		ref := loaded[i].Platform.Namespace + "/" + loaded[i].Platform.Name
		switch r.Outcome {
		case parallel.Failed:
			failed = append(failed, ref)
		case parallel.Cancelled:
			cancelled = append(cancelled, ref)
		}
	}
	if len(failed) == 0 && len(cancelled) == 0 {
		return nil
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d platforms failed: %s", len(failed), len(loaded), strings.Join(failed, ", ")))
	}
	if len(cancelled) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d cancelled: %s", len(cancelled), len(loaded), strings.Join(cancelled, ", ")))
	}
	err := errors.New(strings.Join(parts, "; "))
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", err, ctx.Err())
	}
	// Each failure was printed with its platform's progress: main prints this line only.
	return &ExitError{Code: exitFailure, Err: err}
}

// fleetStatus is the part of status a row reports, as apply's last line for one
// platform does.
func fleetStatus(st *v1alpha1.OntoPlatformStatus) *printers.FleetStatus {
	if st == nil {
		return nil
	}
	return &printers.FleetStatus{Phase: string(st.Phase), Version: st.Version, ReadyComponents: st.ReadyComponents}
}

// lockedWriter serialises the writes of the platforms' goroutines: each Write, a whole
// line here, lands in one piece.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter puts prefix before each line written to it; its callers write whole
// lines, each in one Write.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(data []byte) (int, error) {
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	for _, line := range lines {
		if line != "" {
			b.WriteString(p.prefix + line)
		}
	}
	if _, err := io.WriteString(p.w, b.String()); err != nil {
		return 0, err
	}
	return len(data), nil
}
