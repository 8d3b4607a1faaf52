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

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// HistoryView shows a platform's revisions, newest last. JSON and YAML print the
// report itself.
type HistoryView struct {
	*upgrade.HistoryReport
	// Now is when the report was read, for the AGE column.
	Now time.Time
}

// MarshalJSON prints the report alone; no revisions is an empty list, not null.
func (v HistoryView) MarshalJSON() ([]byte, error) {
	r := *v.HistoryReport
	if r.Revisions == nil {
		r.Revisions = []upgrade.HistoryEntry{}
	}
	return json.Marshal(r)
}

// shortDigest is how long a digest is shown in the table: "sha256:" and 12 hex
// digits, as container image IDs are.
const shortDigest = len("sha256:") + 12

// WriteText prints one row per revision: REVISION, VERSION, ACTION, RESULT, AGE,
// SNAPSHOT (its Secret while it exists), DIGEST (short) and the first line of the
// message; snapshots that could not be read are explained below the table.
func (v HistoryView) WriteText(out io.Writer, t *Terminal) error {
	r := v.HistoryReport
	var b strings.Builder
	if len(r.Revisions) == 0 {
		fmt.Fprintf(&b, "OntoPlatform %s/%s has no revisions yet: the first apply records one\n", r.Namespace, r.Name)
		_, err := io.WriteString(out, b.String())
		return err
	}
	rows := [][]cell{{{s: "REVISION"}, {s: "VERSION"}, {s: "ACTION"}, {s: "RESULT"}, {s: "AGE"}, {s: "SNAPSHOT"}, {s: "DIGEST"}, {s: "MESSAGE"}}}
	var notes []string
	for _, h := range r.Revisions {
		res := cell{s: string(h.Result), style: t.OK.Render}
		if h.Result != v1alpha1.RevisionSucceeded {
			res.style = t.Fail.Render
		}
		digest := cell{s: h.Digest}
		if len(digest.s) > shortDigest {
			digest.s = digest.s[:shortDigest]
		}
		if h.SnapshotError != "" {
			digest = cell{s: "unreadable", style: t.Warn.Render}
			notes = append(notes, h.SnapshotError) // it names the revision and the Secret
		}
		rows = append(rows, []cell{{s: fmt.Sprint(h.Revision)}, {s: h.Version}, {s: orDash(h.Action)}, res,
			{s: age(v.Now, h.Time.Time)}, {s: orDash(h.Snapshot)}, {s: orDash(digest.s), style: digest.style}, {s: firstLine(h.Message)}})
	}
	writeTableIndent(&b, rows, "")
	for _, n := range notes {
		b.WriteString(t.Warn.Render("! "+n) + "\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// firstLine is s up to its first line break, marked as cut when there is more (-o
// json has the whole message).
func firstLine(s string) string {
	if line, rest, ok := strings.Cut(s, "\n"); ok && strings.TrimSpace(rest) != "" {
		return line + " …"
	}
	return strings.TrimSpace(s)
}
