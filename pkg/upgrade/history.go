/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// HistoryReport is a platform's revision history, newest last, with what is left of
// each revision's snapshot. Its JSON field names are part of `history -o json`.
type HistoryReport struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Revisions are status.history, newest last (at most v1alpha1.MaxHistory).
	Revisions []HistoryEntry `json:"revisions"`
}

// HistoryEntry is one revision of status.history and its snapshot.
type HistoryEntry struct {
	Revision int64                   `json:"revision"`
	Version  string                  `json:"version"`
	Action   string                  `json:"action,omitempty"`
	Result   v1alpha1.RevisionResult `json:"result"`
	Time     metav1.Time             `json:"time"`
	Message  string                  `json:"message,omitempty"`
	// Snapshot names the revision's snapshot Secret while it exists; empty when none
	// was recorded (a failed run) or it is gone.
	Snapshot string `json:"snapshot,omitempty"`
	// Digest of the snapshot, checked against its content; empty when it could not be
	// read.
	Digest string `json:"digest,omitempty"`
	// SnapshotError says why a recorded snapshot could not be read: changed in the
	// cluster (digest mismatch), written by a newer kubectl-onto, or not readable with
	// the caller's permissions.
	SnapshotError string `json:"snapshotError,omitempty"`
}

// History reads the revision history of the OntoPlatform namespace/name (name empty:
// the only one of the namespace) and checks each recorded snapshot: one Get per
// revision that recorded one. It writes nothing.
func History(ctx context.Context, clients *kube.Clients, namespace, name string) (*HistoryReport, error) {
	live, err := (&inventory.Lister{Dynamic: clients.Dynamic, Mapper: clients.Mapper}).Parent(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &p); err != nil {
		return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", live.GetNamespace(), live.GetName(), err)
	}
	a := apply.NewApplier(clients, nil)
	load := func(ctx context.Context, n int64) (*apply.Snapshot, error) {
		return a.LoadRevision(ctx, p.Namespace, p.Name, n)
	}
	revs, err := historyEntries(ctx, p.Status.History, load)
	if err != nil {
		return nil, fmt.Errorf("history of %s/%s: %w", p.Namespace, p.Name, err)
	}
	return &HistoryReport{Name: p.Name, Namespace: p.Namespace, Revisions: revs}, nil
}

// historyEntries turns status.history into entries, loading the snapshot of each
// revision that recorded one, concurrently. A snapshot that is gone leaves Snapshot
// empty; one that cannot be read keeps its name and says why. Only a cancelled ctx is
// an error.
func historyEntries(ctx context.Context, history []v1alpha1.Revision, load func(context.Context, int64) (*apply.Snapshot, error)) ([]HistoryEntry, error) {
	out := make([]HistoryEntry, len(history))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, h := range history {
		out[i] = HistoryEntry{Revision: h.Revision, Version: h.Version, Action: h.Action, Result: h.Result, Time: h.Time, Message: h.Message}
		if h.Snapshot == "" {
			continue
		}
		g.Go(func() error {
			snap, err := load(gctx, h.Revision)
			switch {
			case err == nil:
				out[i].Snapshot, out[i].Digest = h.Snapshot, snap.Digest
			case apierrors.IsNotFound(err):
				// Pruned (only the newest MaxHistory keep one) or deleted by hand.
			case gctx.Err() != nil:
				return gctx.Err()
			default:
				out[i].Snapshot, out[i].SnapshotError = h.Snapshot, err.Error()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
