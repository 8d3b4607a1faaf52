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

	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// ClusterFleetView is the outcome of plan, apply or upgrade over a fleet of clusters
// (--fleet): a row per cluster, in wave order. -o json marshals it as it is; the
// field names are part of the commands' interface.
type ClusterFleetView struct {
	// Fleet is the fleet file.
	Fleet string `json:"fleet"`
	// Action is plan, apply or upgrade.
	Action   string       `json:"action"`
	Clusters []ClusterRow `json:"clusters"`
	// StoppedAt is the wave whose failures stopped the fleet; the clusters of the
	// waves after it are not-started.
	StoppedAt string `json:"stoppedAt,omitempty"`
	// Success is true when every cluster succeeded (or was up to date).
	Success bool `json:"success"`
	// ShowUnchanged lists the unchanged objects of each plan (plan --show-unchanged).
	ShowUnchanged bool `json:"-"`
}

// ClusterRow is one cluster's outcome.
type ClusterRow struct {
	// Cluster is the name the fleet file gives it (its context when none).
	Cluster string `json:"cluster"`
	Context string `json:"context"`
	Wave    string `json:"wave"`
	// Result is succeeded, up-to-date (nothing to do: every platform already ran
	// what the fleet asks, Succeeded), failed, cancelled or not-started (an earlier
	// wave stopped the fleet).
	Result string `json:"result"`
	// Changes counts the objects written (apply), components moved (upgrade) or
	// objects the plans change (plan), over the cluster's platforms.
	Changes int `json:"changes"`
	// Conflicts counts the fields the plans would take from another field manager
	// (plan only).
	Conflicts       int     `json:"conflicts"`
	DurationSeconds float64 `json:"durationSeconds"`
	// Requests is how many API requests the run sent to the cluster.
	Requests int `json:"requests"`
	// Platforms are the cluster's platforms, as a run over several platforms of one
	// cluster reports them (with the plan, for plan).
	Platforms []FleetPlatform `json:"platforms,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// WriteText prints each plan (plan only), then the table:
//
//	CLUSTER  WAVE    RESULT     CHANGES  DURATION  ERROR
//	dev      canary  succeeded  42       12.3s
//
// plan's table is CLUSTER WAVE CHANGES CONFLICTS ERROR.
func (v ClusterFleetView) WriteText(out io.Writer, t *Terminal) error {
	for _, c := range v.Clusters {
		for _, p := range c.Platforms {
			if p.Plan == nil {
				continue
			}
			fmt.Fprintf(out, "%s %s (wave %s): %s/%s\n", t.Bold.Render("cluster"), t.Bold.Render(c.Cluster), c.Wave, p.Namespace, p.Name)
			if err := (PlanView{Plan: p.Plan, ShowUnchanged: v.ShowUnchanged}).WriteText(out, t); err != nil {
				return err
			}
			if _, err := fmt.Fprintln(out); err != nil {
				return err
			}
		}
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	if v.Action == "plan" {
		fmt.Fprintln(tw, "CLUSTER\tWAVE\tCHANGES\tCONFLICTS\tERROR")
	} else {
		fmt.Fprintln(tw, "CLUSTER\tWAVE\tRESULT\tCHANGES\tDURATION\tERROR")
	}
	for _, c := range v.Clusters {
		errLine, _, _ := strings.Cut(c.Error, "\n")
		if v.Action == "plan" {
			changes, conflicts := fmt.Sprint(c.Changes), fmt.Sprint(c.Conflicts)
			if c.Result != "succeeded" && c.Result != "up-to-date" {
				changes, conflicts = "-", "-"
				if errLine == "" {
					errLine = c.Result
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Cluster, c.Wave, changes, conflicts, errLine)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\t%s\n", c.Cluster, c.Wave, c.Result, c.Changes, c.DurationSeconds, errLine)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeTrimmed(out, table.String()); err != nil {
		return err
	}
	if v.StoppedAt != "" {
		_, err := fmt.Fprintf(out, "The fleet stopped after wave %s: the clusters of the later waves were not touched. Fix the failure and run the same command again: it resumes where it stopped.\n", v.StoppedAt)
		return err
	}
	return nil
}

// writeTrimmed writes a tabwriter table without the blanks it pads an empty last
// cell with, so logs carry no trailing blanks.
func writeTrimmed(out io.Writer, table string) error {
	var b strings.Builder
	for _, line := range strings.SplitAfter(table, "\n") {
		if line != "" {
			b.WriteString(strings.TrimRight(line, " \n") + "\n")
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// ClusterStatusView is status --fleet: one row per cluster and platform.
type ClusterStatusView struct {
	Fleet    string              `json:"fleet"`
	Clusters []ClusterStatusItem `json:"clusters"`
}

// ClusterStatusItem is one cluster's platforms, as status reports them, or why they
// could not be read.
type ClusterStatusItem struct {
	Cluster   string           `json:"cluster"`
	Context   string           `json:"context"`
	Wave      string           `json:"wave"`
	Platforms []*status.Report `json:"platforms"`
	// Missing names the fleet's platforms not installed on the cluster
	// ("namespace/name").
	Missing []string `json:"missing,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// WriteText prints the table:
//
//	CLUSTER  WAVE    PHASE      VERSION  READY  AGE
//	dev      canary  Succeeded  1.6.0    5/5    3m
//
// A PLATFORM column is added when the fleet deploys more than one platform, an ERROR
// column when a cluster could not be read.
func (v ClusterStatusView) WriteText(out io.Writer, _ *Terminal) error {
	several, errs := false, false
	for _, c := range v.Clusters {
		if len(c.Platforms)+len(c.Missing) > 1 {
			several = true
		}
		errs = errs || c.Error != ""
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	platformCol := func(s string) string {
		if several {
			return s + "\t"
		}
		return ""
	}
	// ERROR only when a cluster could not be read: the usual table is kubectl's.
	errCol := ""
	if errs {
		errCol = "\tERROR"
	}
	fmt.Fprintf(tw, "CLUSTER\tWAVE\t%sPHASE\tVERSION\tREADY\tAGE%s\n", platformCol("PLATFORM"), errCol)
	for _, c := range v.Clusters {
		errLine, _, _ := strings.Cut(c.Error, "\n")
		if errLine != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s-\t-\t-\t-\t%s\n", c.Cluster, c.Wave, platformCol("-"), errLine)
			continue
		}
		for _, r := range c.Platforms {
			version := r.Version
			if version == "" {
				version = "-"
			}
			phase := string(r.Phase)
			if phase == "" {
				phase = "-"
			}
			age := createdAge(r)
			fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%s\t%s\t\n", c.Cluster, c.Wave, platformCol(r.Namespace+"/"+r.Name), phase, version, r.ReadyComponents, age)
		}
		for _, m := range c.Missing {
			fmt.Fprintf(tw, "%s\t%s\t%sNotInstalled\t-\t-\t-\t\n", c.Cluster, c.Wave, platformCol(m))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeTrimmed(out, table.String())
}
