/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types that the kstatus conventions define (sigs.k8s.io/cli-utils
// pkg/kstatus), read by Flux, kapp and Argo CD's generic checks. They are
// "abnormal-true": they mean something only while True. They are kept False rather
// than removed: the status is written by server-side apply and by updates, and an
// item one writer drops while another still owns some of its fields would stay
// behind without its reason and message, which the API server refuses.
const (
	// ConditionReconciling is True while a run (apply, upgrade, rollback, the watch's
	// pass or a CLI run the watch waits for) is changing the platform.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the last run ended in a failure that needs a
	// person: a failed upgrade, an apply the API server refused, components that
	// never became ready.
	ConditionStalled = "Stalled"
)

// SyncConditions derives Ready, Reconciling and Stalled from Progressing and
// Degraded, and records which generation the status describes. Every writer of an
// OntoPlatform's status (apply, upgrade and rollback, the watch) sets Progressing and
// Degraded, then calls SyncConditions just before the write, so that `kubectl wait
// --for=condition=Ready`, kstatus (Flux, kapp) and `kubectl onto status` never read a
// different story:
//
//   - Progressing=True (a run in flight): Ready=False and Reconciling=True, with the
//     run's reason and message; Stalled=False.
//   - otherwise Degraded=True (the run failed, or components are not ready):
//     Ready=False and Stalled=True with Degraded's reason and message;
//     Reconciling=False.
//   - otherwise Ready=True (a writer that found a component not ready says so with
//     Degraded), keeping the writer's own Ready reason and message when it set one;
//     Reconciling and Stalled False.
//
// Ready is never carried over from before a run: an upgrade's last step finds Ready
// False (it was in flight) and the platform healthy, and Ready must follow.
//
// observedGeneration moves to generation once no run is in flight, whether the run
// succeeded or failed: kstatus reads a status whose observedGeneration lags the spec
// as InProgress whatever its conditions say, so a failed run must move it for Stalled
// to be seen. It never moves backwards (a run that rendered an older generation than
// one already recorded does not undo that record).
func (s *OntoPlatformStatus) SyncConditions(generation int64, now metav1.Time) {
	progressing := meta.FindStatusCondition(s.Conditions, ConditionProgressing)
	degraded := meta.FindStatusCondition(s.Conditions, ConditionDegraded)
	if progressing == nil && degraded == nil {
		return // nothing recorded yet: nothing to derive from
	}
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: msg, ObservedGeneration: generation, LastTransitionTime: now})
	}
	switch {
	case progressing != nil && progressing.Status == metav1.ConditionTrue:
		reason, msg := progressing.Reason, progressing.Message
		set(ConditionReady, metav1.ConditionFalse, reason, msg)
		set(ConditionReconciling, metav1.ConditionTrue, reason, msg)
		set(ConditionStalled, metav1.ConditionFalse, reason, "")
		return
	case degraded != nil && degraded.Status == metav1.ConditionTrue:
		reason, msg := degraded.Reason, degraded.Message
		set(ConditionReady, metav1.ConditionFalse, reason, msg)
		set(ConditionStalled, metav1.ConditionTrue, reason, msg)
	default:
		if ready := meta.FindStatusCondition(s.Conditions, ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
			msg := ""
			if s.ReadyComponents != "" {
				msg = s.ReadyComponents + " components ready"
			}
			set(ConditionReady, metav1.ConditionTrue, ReasonComponentsReady, msg)
		} else {
			ready.ObservedGeneration = generation
		}
		set(ConditionStalled, metav1.ConditionFalse, ReasonComponentsReady, "")
	}
	idle := ReasonIdle
	if progressing != nil && progressing.Reason != "" {
		idle = progressing.Reason
	}
	set(ConditionReconciling, metav1.ConditionFalse, idle, "")
	s.ObservedGeneration = max(s.ObservedGeneration, generation)
}

// InFlight reports whether the status records a run in progress (Progressing=True).
func (s *OntoPlatformStatus) InFlight() bool {
	return meta.IsStatusConditionTrue(s.Conditions, ConditionProgressing)
}
