/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// UninstallPlanView shows what an uninstall deletes, step by step, and what it keeps:
// the output of `uninstall --dry-run`. JSON and YAML print the plan itself.
type UninstallPlanView struct {
	*apply.UninstallPlan
	// DryRun is the strategy the plan was checked with, for the heading.
	DryRun apply.DryRunStrategy
}

// MarshalJSON prints the plan alone.
func (v UninstallPlanView) MarshalJSON() ([]byte, error) { return json.Marshal(v.UninstallPlan) }

// WriteText prints each step in deletion order, then what is kept and a summary.
func (v UninstallPlanView) WriteText(out io.Writer, t *Terminal) error {
	p := v.UninstallPlan
	var b strings.Builder
	checked := ""
	if v.DryRun == apply.DryRunServer {
		checked = ", checked by the API server"
	}
	fmt.Fprintf(&b, "Uninstall of OntoPlatform %s/%s (dry run%s): in this order\n", p.Platform.Namespace, p.Platform.Name, checked)
	planes := p.StagePlanes()
	for i, stage := range p.Stages() {
		together := ""
		if len(stage) > 1 {
			together = " (together)"
		}
		fmt.Fprintf(&b, "\n%d. %s%s\n", i+1, t.Bold.Render(strings.Join(planes[i], ", ")), together)
		for _, s := range stage {
			for _, o := range s.Objects {
				fmt.Fprintf(&b, "  %s delete %s\n", t.Fail.Render("-"), o)
			}
		}
	}
	if len(p.Kept) > 0 {
		fmt.Fprintf(&b, "\n%s\n", t.Bold.Render("kept"))
		for _, k := range p.Kept {
			fmt.Fprintf(&b, "  %s %s: %s\n", t.Faint.Render("="), k.Object, k.Reason)
		}
	}
	fmt.Fprintf(&b, "\nUninstall: %d to delete, %d kept. Nothing was deleted.\n", p.Count(), len(p.Kept))
	_, err := io.WriteString(out, b.String())
	return err
}
