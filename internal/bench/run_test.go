/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// TestPlanes reads a run's plane timings: the gate (serving) per plane, and the
// Available seen in the health check after the last plane.
func TestPlanes(t *testing.T) {
	at := func(s int, e apply.Event) TimedEvent { return TimedEvent{At: time.Duration(s) * time.Second, Event: e} }
	r := &Run{Events: []TimedEvent{
		at(1, apply.Event{Type: apply.EventPlaneStarted, Plane: "infrastructure"}),
		at(2, apply.Event{Type: apply.EventWaiting, Plane: "infrastructure", Object: "StatefulSet/postgres"}),
		at(5, apply.Event{Type: apply.EventWaiting, Plane: "infrastructure", Object: "StatefulSet/postgres", Ready: true}),
		at(6, apply.Event{Type: apply.EventPlaneReady, Plane: "infrastructure"}),
		at(6, apply.Event{Type: apply.EventPlaneStarted, Plane: "tenancy"}),
		at(6, apply.Event{Type: apply.EventPlaneReady, Plane: "tenancy"}),
		at(7, apply.Event{Type: apply.EventWaiting, Plane: "infrastructure", Object: "StatefulSet/postgres"}),
		at(15, apply.Event{Type: apply.EventWaiting, Plane: "infrastructure", Object: "StatefulSet/postgres", Ready: true}),
		at(15, apply.Event{Type: apply.EventDone}),
	}}
	got, err := r.Planes()
	if err != nil {
		t.Fatal(err)
	}
	want := []PlaneTiming{
		{Name: "infrastructure", Started: time.Second, Ready: 6 * time.Second, Workloads: 1, SlowestRollout: 5 * time.Second, Available: 15 * time.Second},
		{Name: "tenancy", Started: 6 * time.Second, Ready: 6 * time.Second, Available: 6 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Planes() (-want +got):\n%s", diff)
	}
	if b := got[0].Beyond(); b != time.Second {
		t.Errorf("Beyond = %s, want 1s", b)
	}
}
