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

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// PlanView shows a plan. JSON and YAML print the Plan itself, which `apply --plan`
// reads back.
type PlanView struct {
	*plan.Plan
	// ShowUnchanged lists unchanged objects one by one instead of counting them.
	ShowUnchanged bool
}

// MarshalJSON prints the plan alone, without view options.
func (v PlanView) MarshalJSON() ([]byte, error) { return json.Marshal(v.Plan) }

// maxValueWidth keeps one changed field on one line.
const maxValueWidth = 72

// WriteText prints the plan grouped by plane, the way `terraform plan` reads: a sign and
// action per object, the changed fields under updates, conflicts, then a summary.
func (v PlanView) WriteText(out io.Writer, t *Terminal) error {
	p := v.Plan
	var b strings.Builder
	if !p.HasChanges() && p.Summary.Conflicts == 0 && !v.ShowUnchanged {
		fmt.Fprintf(&b, "No changes: OntoPlatform %s/%s (version %s) matches the cluster, %d objects unchanged.\n",
			p.Platform.Namespace, p.Platform.Name, p.Version, p.Summary.Unchanged)
		_, err := io.WriteString(out, b.String())
		return err
	}
	fmt.Fprintf(&b, "Plan for OntoPlatform %s/%s (version %s)\n", p.Platform.Namespace, p.Platform.Name, p.Version)
	for _, pl := range p.Planes {
		unchanged := 0
		var lines []string
		for _, c := range pl.Changes {
			if c.Action == plan.ActionUnchanged && !v.ShowUnchanged {
				unchanged++
				continue
			}
			lines = append(lines, changeLines(c, t)...)
		}
		if len(lines) == 0 {
			continue // nothing to do in this plane; the summary counts it
		}
		fmt.Fprintf(&b, "\n%s\n", t.Bold.Render(pl.Name))
		for _, l := range lines {
			fmt.Fprintf(&b, "%s\n", l)
		}
		if unchanged > 0 {
			fmt.Fprintf(&b, "  %s\n", t.Faint.Render(fmt.Sprintf("= %d unchanged", unchanged)))
		}
	}
	s := p.Summary
	fmt.Fprintf(&b, "\nPlan: %d to create, %d to update, %d to delete, %d unchanged", s.Create, s.Update, s.Delete, s.Unchanged)
	if s.Replace > 0 {
		fmt.Fprintf(&b, ", %d to replace", s.Replace)
	}
	if s.Conflicts > 0 {
		fmt.Fprintf(&b, ", %s", t.Fail.Render(fmt.Sprintf("%d conflicts", s.Conflicts)))
	}
	b.WriteString(".\n")
	if s.Conflicts > 0 {
		b.WriteString(conflictAdvice(p))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func changeLines(c plan.Change, t *Terminal) []string {
	var sign, action string
	switch c.Action {
	case plan.ActionCreate:
		sign, action = t.OK.Render("+"), t.OK.Render("create")
	case plan.ActionUpdate:
		sign, action = t.Warn.Render("~"), t.Warn.Render("update")
	case plan.ActionDelete:
		sign, action = t.Fail.Render("-"), t.Fail.Render("delete")
	case plan.ActionReplace:
		sign, action = t.Warn.Render("±"), t.Warn.Render("replace (pods kept running)")
	default:
		sign, action = t.Faint.Render("="), t.Faint.Render("unchanged")
	}
	lines := []string{fmt.Sprintf("  %s %s %s", sign, action, c.Object)}
	for _, f := range c.Fields {
		lines = append(lines, fmt.Sprintf("      %s: %s → %s", f.Path, formatValue(f.Old), formatValue(f.New)))
	}
	for _, cl := range c.Claims {
		lines = append(lines, fmt.Sprintf("      expand PersistentVolumeClaim %s: %s → %s", cl.Name, cl.From, cl.To))
	}
	for _, cf := range c.Conflicts {
		var line string
		switch cf.Kind {
		case plan.ConflictInventory:
			line = "! conflict: the object belongs to " + cf.Manager
		case plan.ConflictUnowned:
			line = "! conflict: the object exists and belongs to no platform"
		default:
			who := cf.Manager
			if who == "" {
				who = "another manager"
			} else {
				who = fmt.Sprintf("%q", who)
			}
			field := cf.Field
			if field == "" {
				field = cf.Message
			}
			line = fmt.Sprintf("! conflict: %s is owned by %s", field, who)
		}
		lines = append(lines, "      "+t.Fail.Render(line))
	}
	return lines
}

// conflictAdvice says, once per kind of conflict in p, what apply will do and the way
// out.
func conflictAdvice(p *plan.Plan) string {
	kinds := map[plan.ConflictKind]bool{}
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			for _, cf := range c.Conflicts {
				kinds[cf.Kind] = true
			}
		}
	}
	var b strings.Builder
	if kinds[plan.ConflictFieldManager] || kinds[""] {
		b.WriteString("Fields owned by another manager make apply fail; --force-conflicts takes them over.\n")
	}
	if kinds[plan.ConflictUnowned] {
		b.WriteString("Objects that belong to no platform make apply fail; --adopt makes them this platform's.\n")
	}
	if kinds[plan.ConflictInventory] {
		b.WriteString("Objects of another platform make apply fail; they are never taken over.\n")
	}
	return b.String()
}

// formatValue prints a field value compactly on one line; absent values print as
// "(none)".
func formatValue(v any) string {
	if v == nil {
		return "(none)"
	}
	if s, ok := v.(string); ok && s == plan.Masked {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > maxValueWidth {
		s = s[:maxValueWidth-3] + "..."
	}
	return s
}
