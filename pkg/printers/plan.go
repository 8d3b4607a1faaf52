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
// action per object, the changed fields under updates, conflicts, then a summary and
// the plan's warnings.
func (v PlanView) WriteText(out io.Writer, t *Terminal) error {
	p := v.Plan
	var b strings.Builder
	if !p.HasChanges() && p.Summary.Conflicts == 0 && !v.ShowUnchanged {
		fmt.Fprintf(&b, "No changes: OntoPlatform %s/%s (version %s) matches the cluster, %d objects unchanged.\n",
			p.Platform.Namespace, p.Platform.Name, p.Version, p.Summary.Unchanged)
		// A warning stands without a change: a Secret still missing, a quota already
		// exceeded.
		writeWarnings(&b, t, p.Warnings)
		_, err := io.WriteString(out, b.String())
		return err
	}
	fmt.Fprintf(&b, "Plan for OntoPlatform %s/%s (version %s)\n", p.Platform.Namespace, p.Platform.Name, p.Version)
	for _, pl := range p.Planes {
		var unchanged []string
		var lines []string
		for _, c := range pl.Changes {
			if c.Action == plan.ActionUnchanged && !v.ShowUnchanged {
				unchanged = append(unchanged, c.Object.String())
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
		switch n := len(unchanged); {
		case n == 0:
		case n <= 2:
			// A bare "1 unchanged" under a create reads as a riddle: name so few.
			fmt.Fprintf(&b, "  %s\n", t.Faint.Render(fmt.Sprintf("= %d unchanged: %s", n, strings.Join(unchanged, ", "))))
		default:
			fmt.Fprintf(&b, "  %s\n", t.Faint.Render(fmt.Sprintf("= %d unchanged", n)))
		}
	}
	s := p.Summary
	fmt.Fprintf(&b, "\nPlan: %d to create, %d to update, %d to delete, %d unchanged", s.Create, s.Update, s.Delete, s.Unchanged)
	if s.Replace > 0 {
		fmt.Fprintf(&b, ", %d to replace", s.Replace)
	}
	if s.Conflicts > 0 {
		fmt.Fprintf(&b, ", %s", t.Fail.Render(plural(s.Conflicts, "conflict", "conflicts")))
	}
	b.WriteString(".\n")
	if s.Conflicts > 0 {
		b.WriteString(conflictAdvice(p))
	}
	writeWarnings(&b, t, p.Warnings)
	_, err := io.WriteString(out, b.String())
	return err
}

func writeWarnings(b *strings.Builder, t *Terminal, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(b, "%s %s\n", t.Warn.Render("Warning:"), w)
	}
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
		oldV, newV := formatChange(f.Old, f.New)
		if _, wasBool := f.Old.(bool); wasBool && f.New == nil && c.Object.Kind == "OntoPlatform" {
			// The spec's booleans are omitted when false: "false" is what the user wrote.
			newV = "false"
		}
		lines = append(lines, fmt.Sprintf("      %s: %s → %s", f.Path, oldV, newV))
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

// formatChange prints both values of a changed field on one line each. Long values
// that share a prefix (an image reference, a URL) are cut to where they differ, so the
// change is never hidden behind "...".
func formatChange(oldV, newV any) (string, string) {
	o, n := formatValue(oldV), formatValue(newV)
	if len(o) <= maxValueWidth && len(n) <= maxValueWidth {
		return o, n
	}
	if oldV != nil && newV != nil {
		common := 0
		for common < len(o) && common < len(n) && o[common] == n[common] {
			common++
		}
		// Keep a little context before the first difference.
		const context = 12
		if cut := common - context; cut > 0 {
			o, n = "…"+o[cut:], "…"+n[cut:]
		}
	}
	return truncate(o), truncate(n)
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
	return string(data)
}

func truncate(s string) string {
	if r := []rune(s); len(r) > maxValueWidth {
		return string(r[:maxValueWidth-1]) + "…"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
