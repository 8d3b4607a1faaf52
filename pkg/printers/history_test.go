/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

func TestHistoryView(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	full := &upgrade.HistoryReport{Name: "onto-production", Namespace: "onto-system", Revisions: []upgrade.HistoryEntry{
		// Pruned: only the newest 10 keep a snapshot.
		{Revision: 3, Version: "1.4.0", Time: ago(30 * 24 * time.Hour), Result: v1alpha1.RevisionSucceeded, Action: "apply"},
		{Revision: 4, Version: "1.5.0", Time: ago(50 * time.Hour), Result: v1alpha1.RevisionSucceeded, Action: "upgrade",
			Snapshot: "onto-production-rev-4", Digest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{Revision: 5, Version: "1.5.0", Time: ago(26 * time.Hour), Result: v1alpha1.RevisionFailed, Action: "apply",
			Message: "apply would take over what is not this platform's; nothing was written:\n  Deployment onto-system/gateway: .spec.replicas is owned by field manager \"kubectl\""},
		{Revision: 6, Version: "1.5.0", Time: ago(3 * time.Hour), Result: v1alpha1.RevisionSucceeded, Action: "scale",
			Snapshot: "onto-production-rev-6", SnapshotError: "revision 6 of onto-system/onto-production: Secret onto-production-rev-6: decode snapshot: snapshot does not match its digest: it was changed after it was recorded"},
		{Revision: 7, Version: "1.5.0", Time: ago(5 * time.Minute), Result: v1alpha1.RevisionSucceeded, Action: "scale",
			Snapshot: "onto-production-rev-7", Digest: "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
	}}
	tests := []struct {
		name   string
		report *upgrade.HistoryReport
		format printers.Format
	}{
		{name: "text", report: full, format: printers.FormatText},
		{name: "json", report: full, format: printers.FormatJSON},
		{name: "yaml", report: full, format: printers.FormatYAML},
		{name: "empty", report: &upgrade.HistoryReport{Name: "onto", Namespace: "onto"}, format: printers.FormatText},
		{name: "empty-json", report: &upgrade.HistoryReport{Name: "onto", Namespace: "onto"}, format: printers.FormatJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.Write(&out, tc.format, printers.Plain(&out), printers.HistoryView{HistoryReport: tc.report, Now: now}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestHistoryView", tc.name+".golden"))
		})
	}
}
