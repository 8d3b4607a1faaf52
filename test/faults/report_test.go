//go:build faults

/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package faults

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// The report `make faults` prints: one Markdown row per scenario with what its
// re-runs took and wrote. converges records each re-run; scenario writes the row
// when its test ends, to the file ONTO_FAULTS_REPORT names (hack/test.sh sets it),
// and to the test log.

// rerunOutcome is one converged re-run: its wall time and how many objects it wrote.
type rerunOutcome struct {
	wall   time.Duration
	writes int
}

var outcomes = struct {
	sync.Mutex
	byTest map[string][]rerunOutcome
}{byTest: map[string][]rerunOutcome{}}

// recordRerun keeps a converged re-run of test t for its scenario's row.
func recordRerun(t *testing.T, r signalled) {
	outcomes.Lock()
	defer outcomes.Unlock()
	outcomes.byTest[t.Name()] = append(outcomes.byTest[t.Name()], rerunOutcome{wall: r.exitedAt.Sub(r.startedAt), writes: writes(r.events)})
}

// writes counts the objects a run created, changed, replaced, pruned or (an
// uninstall) deleted.
func writes(events []apply.Event) int {
	n := 0
	for _, ev := range events {
		switch {
		case ev.Type == apply.EventObjectPruned, ev.Type == apply.EventObjectDeleted:
			n++
		case ev.Type == apply.EventObjectApplied && ev.Action != plan.ActionUnchanged && ev.Action != "":
			n++
		}
	}
	return n
}

// scenario names t's row; the row is written when t ends, from the re-runs of t
// and its subtests: how many converged, their wall time and writes (median and
// maximum), and what was left behind: none when every check passed.
func scenario(t *testing.T, title string) {
	t.Cleanup(func() {
		outcomes.Lock()
		var runs []rerunOutcome
		for name, o := range outcomes.byTest {
			if name == t.Name() || strings.HasPrefix(name, t.Name()+"/") {
				runs = append(runs, o...)
			}
		}
		outcomes.Unlock()
		left := "none"
		if t.Failed() {
			left = "**test failed**, see its log"
		}
		row := fmt.Sprintf("| %s | %d | %s | %s | %s |", title, len(runs),
			spread(runs, func(o rerunOutcome) float64 { return o.wall.Seconds() }, "%.1f s"),
			spread(runs, func(o rerunOutcome) float64 { return float64(o.writes) }, "%.0f"), left)
		t.Log("report: " + row)
		path := os.Getenv("ONTO_FAULTS_REPORT")
		if path == "" {
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("report: %v", err)
			return
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, row); err != nil {
			t.Errorf("report: %v", err)
		}
	})
}

// spread is "median (max)" of one figure of runs, or "-" for none.
func spread(runs []rerunOutcome, figure func(rerunOutcome) float64, format string) string {
	if len(runs) == 0 {
		return "-"
	}
	v := make([]float64, len(runs))
	for i, o := range runs {
		v[i] = figure(o)
	}
	slices.Sort(v)
	median := v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	if len(v) == 1 {
		return fmt.Sprintf(format, median)
	}
	return fmt.Sprintf(format+" ("+format+")", median, v[len(v)-1])
}
