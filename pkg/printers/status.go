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
	"time"

	"github.com/charmbracelet/lipgloss"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// StatusView shows a platform's status. JSON and YAML print the Report itself.
type StatusView struct {
	*status.Report
}

// Names is the platform as kubectl's -o name prints it.
func (v StatusView) Names() []string { return []string{platformResourceName + "/" + v.Name} }

// MarshalJSON prints the report alone.
func (v StatusView) MarshalJSON() ([]byte, error) { return json.Marshal(v.Report) }

// WriteText prints the summary, conditions, components, the upgrade in progress and
// the revision history, with ages relative to when the report was observed.
func (v StatusView) WriteText(out io.Writer, t *Terminal) error {
	r := v.Report
	now := r.ObservedAt.Time
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s\n", t.Bold.Render("OntoPlatform"), r.Namespace, r.Name)
	phase := string(r.Phase)
	if phase == "" {
		phase = "(none recorded)"
	}
	fmt.Fprintf(&b, "  Phase:       %s\n", phaseStyle(t, r.Phase).Render(phase))
	if r.DeletingSince != nil {
		fmt.Fprintf(&b, "  Deleting:    %s\n", t.Warn.Render(fmt.Sprintf("since %s ago, held by %s: the watch uninstalls it, or run kubectl onto uninstall %s -n %s",
			age(now, r.DeletingSince.Time), strings.Join(r.Finalizers, ", "), r.Name, r.Namespace)))
	}
	version := r.Version
	if version == "" {
		version = "(none installed)"
	}
	if r.SpecVersion != r.Version {
		version += fmt.Sprintf(" (spec asks for %s)", r.SpecVersion)
	}
	fmt.Fprintf(&b, "  Version:     %s\n", version)
	gen := fmt.Sprintf("%d (observed %d)", r.Generation, r.ObservedGeneration)
	if r.ObservedGeneration < r.Generation {
		gen = t.Warn.Render(gen + ": the spec changed since the last run")
	}
	fmt.Fprintf(&b, "  Generation:  %s\n", gen)
	ready := r.ReadyComponents + " components ready"
	if r.Ready {
		ready = t.OK.Render(ready)
	} else {
		ready = t.Fail.Render(ready)
	}
	fmt.Fprintf(&b, "  Ready:       %s\n", ready)

	// Conditions are what the last run wrote, the rest of the view is live: say so,
	// or a recorded "13/13 components ready" reads as contradicting the live count.
	header := "Conditions"
	if r.ConditionsRecordedAt != nil {
		header += fmt.Sprintf(" (recorded by the last run, %s ago)", age(now, r.ConditionsRecordedAt.Time))
	}
	b.WriteString("\n" + t.Header.Render(header) + "\n")
	if len(r.Conditions) == 0 {
		b.WriteString("  " + t.Faint.Render("(none recorded)") + "\n")
	} else {
		rows := [][]cell{{{s: "TYPE"}, {s: "STATUS"}, {s: "REASON"}, {s: "AGE"}, {s: "MESSAGE"}}}
		for _, c := range r.Conditions {
			msg := cell{s: c.Message}
			if c.LiveDisagrees {
				msg = cell{s: strings.TrimSpace(fmt.Sprintf("%s (recorded; live: %s ready)", c.Message, r.ReadyComponents)), style: t.Warn.Render}
			}
			rows = append(rows, []cell{{s: c.Type}, {s: c.Status, style: conditionStyle(t, c.Type, c.Status)}, {s: c.Reason},
				{s: age(now, c.LastTransitionTime.Time)}, msg})
		}
		writeTable(&b, rows)
	}

	b.WriteString("\n" + t.Header.Render("Components") + "\n")
	if len(r.Components) == 0 {
		b.WriteString("  " + t.Faint.Render("(none)") + "\n")
	} else {
		rows := [][]cell{{{s: ""}, {s: "PLANE"}, {s: "COMPONENT"}, {s: "KIND"}, {s: "READY"}, {s: "VERSION"}, {s: "MESSAGE"}}}
		for _, c := range r.Components {
			mark := cell{s: "✓", style: t.OK.Render}
			if !c.Ready {
				mark = cell{s: "✗", style: t.Fail.Render}
			}
			name := c.Name
			if c.Canary {
				name += " (canary)"
			}
			rows = append(rows, []cell{mark, {s: c.Plane}, {s: name}, {s: c.Kind},
				{s: fmt.Sprintf("%d/%d", c.ReadyReplicas, c.DesiredReplicas)}, {s: orDash(c.Version)}, {s: c.Message}})
		}
		writeTable(&b, rows)
	}

	if u := r.Upgrade; u != nil {
		b.WriteString("\n" + t.Header.Render("Upgrade in progress") + "\n")
		fmt.Fprintf(&b, "  %s → %s", u.From, u.To)
		if u.StartedAt != nil {
			fmt.Fprintf(&b, ", started %s ago", age(now, u.StartedAt.Time))
		}
		b.WriteString("\n")
		if len(u.Done) > 0 {
			fmt.Fprintf(&b, "  Done:     %s\n", strings.Join(u.Done, ", "))
		}
		if u.Current != "" {
			current := u.Current
			if u.Step != "" {
				current += " (" + string(u.Step) + ")"
			}
			fmt.Fprintf(&b, "  Current:  %s\n", current)
		}
		if u.FailedComponent != "" {
			fmt.Fprintf(&b, "  Failed:   %s\n", t.Fail.Render(u.FailedComponent))
		}
		if u.Message != "" {
			fmt.Fprintf(&b, "  Message:  %s\n", u.Message)
		}
	}

	if len(r.History) > 0 {
		b.WriteString("\n" + t.Header.Render("History") + "\n")
		rows := [][]cell{{{s: "REVISION"}, {s: "VERSION"}, {s: "ACTION"}, {s: "RESULT"}, {s: "AGE"}, {s: "MESSAGE"}}}
		for _, h := range r.History {
			res := cell{s: string(h.Result), style: t.OK.Render}
			if h.Result != v1alpha1.RevisionSucceeded {
				res.style = t.Fail.Render
			}
			rows = append(rows, []cell{{s: fmt.Sprint(h.Revision)}, {s: h.Version}, {s: orDash(h.Action)}, res,
				{s: age(now, h.Time.Time)}, {s: h.Message}})
		}
		writeTable(&b, rows)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func phaseStyle(t *Terminal, p v1alpha1.Phase) lipgloss.Style {
	switch p {
	case v1alpha1.PhaseRunning:
		return t.OK
	case v1alpha1.PhaseDegraded, v1alpha1.PhaseError:
		return t.Fail
	default:
		return t.Warn
	}
}

// conditionStyle colours a condition's status by whether it is good news: Ready True
// and Degraded False are.
func conditionStyle(t *Terminal, typ, st string) func(...string) string {
	good := (typ == v1alpha1.ConditionDegraded) == (st == "False")
	switch {
	case typ == v1alpha1.ConditionProgressing:
		return t.Faint.Render
	case good:
		return t.OK.Render
	default:
		return t.Fail.Render
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age is kubectl's short duration ("5m", "2d3h"); "<unknown>" for a zero time.
func age(now, then time.Time) string {
	if then.IsZero() || now.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(then))
}

// cell is one table cell: its plain text, which sets the column width, and an
// optional style applied after padding, so escape codes never misalign columns.
type cell struct {
	s     string
	style func(...string) string
}

// writeTable prints rows as columns two spaces apart, indented by two; the last
// column is not padded.
func writeTable(b *strings.Builder, rows [][]cell) { writeTableIndent(b, rows, "  ") }

// writeTableIndent is writeTable with each line starting with indent.
func writeTableIndent(b *strings.Builder, rows [][]cell, indent string) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c.s)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range row {
			text := c.s
			if i < len(row)-1 {
				text += strings.Repeat(" ", widths[i]-len([]rune(c.s))+2)
			}
			if c.style != nil {
				// Style the text only, not the padding.
				pad := len(text) - len(c.s)
				text = c.style(c.s) + strings.Repeat(" ", pad)
			}
			line.WriteString(text)
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
