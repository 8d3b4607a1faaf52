/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"fmt"
	"io"
	"strings"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// StatusListView shows several platforms, one row each, as `kubectl get -A` does.
// JSON and YAML print {"items": [report, ...]}.
type StatusListView struct {
	Items []*status.Report `json:"items"`
	// AllNamespaces adds the NAMESPACE column.
	AllNamespaces bool `json:"-"`
	// Wide adds the spec's version, generations and what is not ready.
	Wide bool `json:"-"`
}

// Names lists ontoplatform.onto.paas/NAME, as kubectl get -o name.
func (v StatusListView) Names() []string {
	names := make([]string, len(v.Items))
	for i, r := range v.Items {
		names[i] = platformResourceName + "/" + r.Name
	}
	return names
}

// platformResourceName is how kubectl names the kind in -o name.
var platformResourceName = strings.ToLower(v1alpha1.GroupVersionKind.Kind) + "." + v1alpha1.GroupVersionKind.Group

// WriteText prints the table, or kubectl's "No resources found" line when empty.
func (v StatusListView) WriteText(out io.Writer, t *Terminal) error {
	if len(v.Items) == 0 {
		_, err := fmt.Fprintln(out, "No OntoPlatforms found.")
		return err
	}
	var header []cell
	if v.AllNamespaces {
		header = append(header, cell{s: "NAMESPACE"})
	}
	header = append(header, cell{s: "NAME"}, cell{s: "PHASE"}, cell{s: "VERSION"}, cell{s: "READY"}, cell{s: "AGE"})
	if v.Wide {
		header = append(header, cell{s: "SPEC-VERSION"}, cell{s: "GENERATION"}, cell{s: "NOT-READY"})
	}
	rows := [][]cell{header}
	for _, r := range v.Items {
		var row []cell
		if v.AllNamespaces {
			row = append(row, cell{s: r.Namespace})
		}
		phase := orDash(string(r.Phase))
		ready := cell{s: r.ReadyComponents, style: t.OK.Render}
		if !r.Ready {
			ready.style = t.Fail.Render
		}
		row = append(row, cell{s: r.Name}, cell{s: phase, style: phaseStyle(t, r.Phase).Render}, cell{s: orDash(r.Version)},
			ready, cell{s: createdAge(r)})
		if v.Wide {
			var notReady []string
			for _, c := range r.Components {
				if !c.Ready {
					notReady = append(notReady, c.Name)
				}
			}
			row = append(row, cell{s: r.SpecVersion}, cell{s: fmt.Sprintf("%d/%d", r.ObservedGeneration, r.Generation)},
				cell{s: orDash(strings.Join(notReady, ","))})
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	writeTableIndent(&b, rows, "")
	_, err := io.WriteString(out, b.String())
	return err
}

func createdAge(r *status.Report) string {
	if r.CreatedAt == nil {
		return "<unknown>"
	}
	return age(r.ObservedAt.Time, r.CreatedAt.Time)
}
