/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// FleetView is the outcome of a plan or apply over several platforms: a row per
// platform, in the order of the input. -o json marshals it as it is; the field names
// are part of the commands' interface.
type FleetView struct {
	Platforms []FleetPlatform `json:"platforms"`
	// Success is true when every platform succeeded.
	Success bool `json:"success"`
	// ShowUnchanged lists the unchanged objects of each plan (plan --show-unchanged).
	ShowUnchanged bool `json:"-"`
}

// FleetPlatform is one platform's outcome.
type FleetPlatform struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Result is succeeded, failed or cancelled (by --fail-fast or Ctrl-C).
	Result string `json:"result"`
	// Changes counts the objects the plan creates, updates, deletes or replaces
	// (plan), or the objects written (apply).
	Changes         int     `json:"changes"`
	DurationSeconds float64 `json:"durationSeconds"`
	// Plan is the platform's plan, as `plan -o json` prints it for one (plan only).
	Plan *plan.Plan `json:"plan,omitempty"`
	// Status is what the apply recorded in the platform's status (apply only).
	Status *FleetStatus `json:"status,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// FleetStatus is the part of a platform's status an apply reports, as its final line
// for one platform does.
type FleetStatus struct {
	Phase           string `json:"phase"`
	Version         string `json:"version"`
	ReadyComponents string `json:"readyComponents"`
}

// WriteText prints each plan (plan only), then the table:
//
//	NAMESPACE  NAME      RESULT     CHANGES  DURATION  ERROR
//	tenant-a   tenant-a  succeeded  0        1.2s
func (v FleetView) WriteText(out io.Writer, t *Terminal) error {
	for _, p := range v.Platforms {
		if p.Plan == nil {
			continue
		}
		if err := (PlanView{Plan: p.Plan, ShowUnchanged: v.ShowUnchanged}).WriteText(out, t); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(out); err != nil {
			return err
		}
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tRESULT\tCHANGES\tDURATION\tERROR")
	for _, p := range v.Platforms {
		// The table keeps one line per platform: the first line of an error is its
		// summary; the whole error was printed with the platform's progress.
		errLine, _, _ := strings.Cut(p.Error, "\n")
		// Seconds, as the progress lines count them.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\t%s\n", p.Namespace, p.Name, p.Result, p.Changes, p.DurationSeconds, errLine)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter pads the cell before an empty ERROR: no trailing blanks in logs.
	var b strings.Builder
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if line != "" {
			b.WriteString(strings.TrimRight(line, " \n") + "\n")
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}
