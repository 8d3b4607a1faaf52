/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// TestHistoryEntries: each revision keeps its fields; a snapshot that loads gives its
// digest, one that is gone leaves no name, one that cannot be read says why, and a
// revision that recorded none is not looked up.
func TestHistoryEntries(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	history := []v1alpha1.Revision{
		{Revision: 4, Version: "1.5.0", Time: at, Result: v1alpha1.RevisionSucceeded, Action: "apply", Snapshot: "p-rev-4"},
		{Revision: 5, Version: "1.6.0", Time: at, Result: v1alpha1.RevisionFailed, Action: "apply", Message: "plane data: not ready"},
		{Revision: 6, Version: "1.5.0", Time: at, Result: v1alpha1.RevisionSucceeded, Action: "scale", Snapshot: "p-rev-6"},
		{Revision: 7, Version: "1.5.0", Time: at, Result: v1alpha1.RevisionSucceeded, Action: "apply", Snapshot: "p-rev-7"},
	}
	var asked []int64
	load := func(_ context.Context, n int64) (*apply.Snapshot, error) {
		switch n {
		case 4:
			return nil, fmt.Errorf("revision 4: no snapshot: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "p-rev-4"))
		case 6:
			return nil, fmt.Errorf("revision 6 of ns/p: Secret p-rev-6: decode snapshot: %w", apply.ErrSnapshotDigest)
		case 7:
			return &apply.Snapshot{Digest: "sha256:0123456789abcdef"}, nil
		}
		asked = append(asked, n)
		return nil, errors.New("not recorded: must not be loaded")
	}
	got, err := historyEntries(t.Context(), history, load)
	if err != nil {
		t.Fatal(err)
	}
	want := []HistoryEntry{
		{Revision: 4, Version: "1.5.0", Time: at, Result: v1alpha1.RevisionSucceeded, Action: "apply"},
		{Revision: 5, Version: "1.6.0", Time: at, Result: v1alpha1.RevisionFailed, Action: "apply", Message: "plane data: not ready"},
		{Revision: 6, Version: "1.5.0", Time: at, Result: v1alpha1.RevisionSucceeded, Action: "scale", Snapshot: "p-rev-6",
			SnapshotError: "revision 6 of ns/p: Secret p-rev-6: decode snapshot: " + apply.ErrSnapshotDigest.Error()},
		{Revision: 7, Version: "1.5.0", Time: at, Result: v1alpha1.RevisionSucceeded, Action: "apply", Snapshot: "p-rev-7", Digest: "sha256:0123456789abcdef"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if len(asked) > 0 {
		t.Errorf("loaded revisions that recorded no snapshot: %v", asked)
	}
}

// TestHistoryEntriesCancelled: a cancelled run is an error, not a column of
// unreadable snapshots.
func TestHistoryEntriesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	history := []v1alpha1.Revision{{Revision: 1, Result: v1alpha1.RevisionSucceeded, Snapshot: "p-rev-1"}}
	_, err := historyEntries(ctx, history, func(ctx context.Context, _ int64) (*apply.Snapshot, error) { return nil, ctx.Err() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("historyEntries = %v, want context canceled", err)
	}
}
