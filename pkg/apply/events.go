/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import "github.com/coomia-dip/kubectl-onto/pkg/plan"

// EventType says what an Event reports.
type EventType string

// Event types, in the order a run emits them.
const (
	EventNoChanges     EventType = "NoChanges"
	EventPlaneStarted  EventType = "PlaneStarted"
	EventObjectApplied EventType = "ObjectApplied"
	EventWaiting       EventType = "Waiting"
	EventPlaneReady    EventType = "PlaneReady"
	EventPlaneFailed   EventType = "PlaneFailed"
	EventObjectPruned  EventType = "ObjectPruned"
	EventDone          EventType = "Done"
	// EventFailed ends a run that failed; like Done it carries the recorded phase.
	EventFailed EventType = "Failed"
	// EventUpgradeStep is a step of an upgrade or rollback: Object is the component
	// (empty for the whole platform), Message what happens.
	EventUpgradeStep EventType = "UpgradeStep"
	// EventLockTakenOver: the lock was held by a process of this host that is gone,
	// and this run took it over.
	EventLockTakenOver EventType = "LockTakenOver"
	// EventWarning: something the run could not do that does not fail it.
	EventWarning EventType = "Warning"
)

// Event is one step of an apply, for progress output (text lines, a spinner, or JSON
// lines for CI). It never holds a Secret value.
type Event struct {
	Type    EventType   `json:"type"`
	Plane   string      `json:"plane,omitempty"`
	Object  string      `json:"object,omitempty"`
	Action  plan.Action `json:"action,omitempty"`
	Ready   bool        `json:"ready,omitempty"`
	Message string      `json:"message,omitempty"`
	// Phase, Version and ReadyComponents are set on the last event of a run (Done or
	// Failed): what the run recorded in the platform's status, so a script reading
	// JSON lines has the outcome without a second command.
	Phase           string `json:"phase,omitempty"`
	Version         string `json:"version,omitempty"`
	ReadyComponents string `json:"readyComponents,omitempty"`
	// Ref is the object an ObjectApplied or ObjectDeleted event is about, for an
	// observer that records the change against the object itself (the watch's
	// Events); Object says the same for people.
	Ref *plan.ObjectRef `json:"-"`
}
