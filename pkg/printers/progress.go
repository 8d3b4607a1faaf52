/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// Progress prints apply events as they happen: one line per event with the time since
// the start, styled on a terminal and plain otherwise; or one JSON object per line for
// CI (JSON). It is safe for concurrent use, as events come from parallel writes.
type Progress struct {
	Out  io.Writer
	Term *Terminal
	JSON bool
	// Now is the clock; the elapsed time is measured from the first event.
	Now func() time.Time
	// Platform, when set, names the platform ("namespace/name") on every line: a run
	// over several platforms interleaves their progress on one stream. It begins each
	// text line and is the "platform" field of each JSON line.
	Platform string
	// Cluster, when set, names the cluster of a run over a fleet of clusters (apply
	// --fleet): it comes first on each text line, and is the "cluster" field of each
	// JSON line.
	Cluster string

	mu    sync.Mutex
	start time.Time
	// waiting are the workloads not ready yet, with their last message, for the
	// spinner line of an interactive terminal.
	waiting map[string]string
	frame   int
}

// spinnerFrames of the status line on an interactive terminal.
const spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

// statusWidth bounds the spinner line so it never wraps on an 80-column terminal.
const statusWidth = 78

// Start runs the spinner line on an interactive terminal until the returned stop is
// called; elsewhere (piped, NO_COLOR, CI, JSON) it does nothing, so logs hold plain
// lines only.
func (p *Progress) Start(ctx context.Context) (stop func()) {
	if p.JSON || p.Term == nil || !p.Term.Interactive {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				p.mu.Lock()
				fmt.Fprint(p.Out, "\r\x1b[K")
				p.mu.Unlock()
				return
			case <-t.C:
				p.mu.Lock()
				p.frame++
				p.drawStatus()
				p.mu.Unlock()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// drawStatus redraws the spinner line in place; the caller holds mu.
func (p *Progress) drawStatus() {
	fmt.Fprint(p.Out, "\r\x1b[K")
	if len(p.waiting) == 0 {
		return
	}
	names := make([]string, 0, len(p.waiting))
	for n := range p.waiting {
		names = append(names, n)
	}
	sort.Strings(names)
	frames := []rune(spinnerFrames)
	line := fmt.Sprintf("%c waiting for %d: %s (%s)", frames[p.frame%len(frames)], len(names), names[0], p.waiting[names[0]])
	if r := []rune(line); len(r) > statusWidth {
		line = string(r[:statusWidth-1]) + "…"
	}
	fmt.Fprint(p.Out, p.Term.Faint.Render(line))
}

// Handle prints one event.
func (p *Progress) Handle(e apply.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.Now()
	if p.start.IsZero() {
		p.start = now
	}
	if p.JSON {
		data, err := json.Marshal(struct {
			Cluster  string `json:"cluster,omitempty"`
			Platform string `json:"platform,omitempty"`
			apply.Event
			Elapsed float64 `json:"elapsedSeconds"`
		}{p.Cluster, p.Platform, e, now.Sub(p.start).Seconds()})
		if err == nil {
			fmt.Fprintf(p.Out, "%s\n", data)
		}
		return
	}
	t := p.Term
	if t.Interactive {
		// The spinner line shows what is still waiting; keep the log to what changed.
		if p.waiting == nil {
			p.waiting = map[string]string{}
		}
		if e.Type == apply.EventWaiting {
			if !e.Ready {
				p.waiting[e.Object] = e.Message
				p.drawStatus()
				return
			}
			delete(p.waiting, e.Object)
		}
		fmt.Fprint(p.Out, "\r\x1b[K")
		defer p.drawStatus()
	}
	var line string
	switch e.Type {
	case apply.EventNoChanges:
		line = t.OK.Render("✓") + " no changes: the cluster already matches the file"
	case apply.EventPlaneStarted:
		line = t.Bold.Render("▸ "+e.Plane) + t.Faint.Render(" ("+e.Message+")")
	case apply.EventObjectApplied:
		verb := map[plan.Action]string{plan.ActionCreate: "created", plan.ActionUpdate: "updated", plan.ActionReplace: "replaced (pods kept running)"}[e.Action]
		if e.Message != "" {
			verb += ": " + e.Message
		}
		line = fmt.Sprintf("    %s %s", e.Object, verb)
	case apply.EventWaiting:
		if e.Ready {
			line = fmt.Sprintf("    %s %s ready", t.OK.Render("✓"), e.Object)
		} else {
			line = fmt.Sprintf("    %s %s: %s", t.Faint.Render("…"), e.Object, e.Message)
		}
	case apply.EventPlaneReady:
		line = t.OK.Render("✓ "+e.Plane) + " healthy"
	case apply.EventPlaneFailed:
		line = t.Fail.Render("✗ "+e.Plane) + ": " + e.Message
	case apply.EventObjectPruned:
		line = fmt.Sprintf("    %s %s deleted (no longer rendered)", t.Fail.Render("-"), e.Object)
	case apply.EventObjectDeleted:
		line = fmt.Sprintf("    %s %s deleted", t.Fail.Render("-"), e.Object)
	case apply.EventObjectKept:
		line = fmt.Sprintf("  %s %s kept: %s", t.Faint.Render("="), e.Object, e.Message)
	case apply.EventPlaneDeleted:
		line = t.OK.Render("✓ "+e.Plane) + " gone"
	case apply.EventWarning:
		line = t.Warn.Render("! warning: ") + e.Message
	case apply.EventLockTakenOver:
		line = t.Warn.Render("!") + " " + e.Message
	case apply.EventUpgradeStep:
		if e.Object == "" {
			line = t.Bold.Render("◆ " + e.Message)
		} else {
			line = t.Bold.Render("◆ "+e.Object) + ": " + e.Message
		}
	case apply.EventDone:
		line = t.OK.Render("✓") + " done: " + e.Message
		if e.Phase != "" {
			line += fmt.Sprintf(" (%s, version %s, %s components ready)", e.Phase, e.Version, e.ReadyComponents)
		}
	case apply.EventFailed:
		// The error itself is printed once, by the command; the line says where it ended.
		if e.Phase == "" {
			return
		}
		line = t.Fail.Render("✗") + fmt.Sprintf(" failed: recorded %s, version %s, %s components ready", e.Phase, e.Version, e.ReadyComponents)
	default:
		line = fmt.Sprintf("%s %s %s %s", e.Type, e.Plane, e.Object, e.Message)
	}
	prefix := ""
	if p.Cluster != "" {
		prefix = t.Bold.Render(p.Cluster) + " "
	}
	if p.Platform != "" {
		prefix += t.Bold.Render(p.Platform) + " "
	}
	fmt.Fprintf(p.Out, "%s%s %s\n", prefix, t.Faint.Render(fmt.Sprintf("[%5.1fs]", now.Sub(p.start).Seconds())), line)
}
