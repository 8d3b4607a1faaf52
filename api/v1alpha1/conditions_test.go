/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/golden"
)

// conditionCase is a status as a writer records it: the conditions it sets itself,
// then SyncConditions, as every writer does before its write.
type conditionCase struct {
	name       string
	generation int64
	// observed is the generation the stored status described before this write.
	observed int64
	// write sets what the writer sets: Progressing, Degraded, and Ready when healthy.
	write func(*v1alpha1.OntoPlatformStatus, func(string, metav1.ConditionStatus, string, string))
	// kstatus is what cli-utils' kstatus (Flux, kapp) makes of the stored object;
	// ready is what `kubectl wait --for=condition=Ready` waits for.
	kstatus kstatus.Status
	ready   metav1.ConditionStatus
}

// ConditionCases are the recorded statuses of every kind of run's outcome. The
// golden files they write (testdata/conditions) are also the input of the Argo CD
// health script's tests, so both judges are held to the same expectations.
func conditionCases() []conditionCase {
	healthy := func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
		s.Phase, s.Version = v1alpha1.PhaseRunning, "1.5.0"
		set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "")
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonComponentsReady, "14/14 components ready")
		set(v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonComponentsReady, "")
	}
	return []conditionCase{
		{name: "healthy", generation: 1, write: healthy, kstatus: kstatus.CurrentStatus, ready: metav1.ConditionTrue},
		{name: "applying", generation: 2, observed: 1, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			healthy(s, set)
			set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonApplying, "applying version 1.5.0")
		}, kstatus: kstatus.InProgressStatus, ready: metav1.ConditionFalse},
		{name: "upgrading", generation: 1, observed: 1, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			healthy(s, set)
			s.Phase = v1alpha1.PhaseUpgrading
			s.Upgrade = &v1alpha1.UpgradeStatus{From: "1.5.0", To: "1.6.0", Action: "upgrade", Done: []string{"postgres"}, Current: "redis", Step: v1alpha1.StepCanary}
			set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonUpgrading, "upgrade 1.5.0 → 1.6.0")
		}, kstatus: kstatus.InProgressStatus, ready: metav1.ConditionFalse},
		{name: "upgrade-failed", generation: 1, observed: 1, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			healthy(s, set)
			s.Phase = v1alpha1.PhaseDegraded
			msg := "upgrade 1.5.0 → 1.6.1: component reasoning-service failed: canary not ready after 5m0s"
			s.Upgrade = &v1alpha1.UpgradeStatus{From: "1.5.0", To: "1.6.1", Action: "upgrade", FailedComponent: "reasoning-service", Message: msg}
			set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonUpgradeFailed, msg)
			set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonUpgradeFailed, msg)
		}, kstatus: kstatus.FailedStatus, ready: metav1.ConditionFalse},
		{name: "apply-failed", generation: 3, observed: 2, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			healthy(s, set)
			s.Phase = v1alpha1.PhaseError
			msg := `control plane: Service onto/gateway: Service "gateway" is invalid: spec.ports[1].name: Duplicate value: "http"`
			set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonApplyFailed, msg)
			set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonApplyFailed, msg)
		}, kstatus: kstatus.FailedStatus, ready: metav1.ConditionFalse},
		{name: "degraded", generation: 1, observed: 1, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			healthy(s, set)
			s.Phase = v1alpha1.PhaseDegraded
			msg := "nessie: 1/2 ready: CrashLoopBackOff"
			set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonComponentsFailed, msg)
			set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonComponentsFailed, msg)
		}, kstatus: kstatus.FailedStatus, ready: metav1.ConditionFalse},
		{name: "rolling-out", generation: 2, observed: 1, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			healthy(s, set)
			msg := "9/14 components ready; not waited for (--wait=false)"
			set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingOut, msg)
		}, kstatus: kstatus.InProgressStatus, ready: metav1.ConditionFalse},
		{name: "upgrade-done", generation: 2, observed: 1, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			// The upgrade's own writes made Ready False while it ran; its last one
			// only ends Progressing, and Ready must follow.
			healthy(s, set)
			set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonUpgrading, "upgrade 1.5.0 → 1.6.0")
			s.SyncConditions(1, metav1.NewTime(time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)))
			s.Version = "1.6.0"
			set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle, "")
		}, kstatus: kstatus.CurrentStatus, ready: metav1.ConditionTrue},
		{name: "recovered", generation: 2, observed: 2, write: func(s *v1alpha1.OntoPlatformStatus, set func(string, metav1.ConditionStatus, string, string)) {
			// A failed run's Stalled goes once a run finds the platform healthy.
			set(v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonUpgradeFailed, "upgrade failed")
			healthy(s, set)
		}, kstatus: kstatus.CurrentStatus, ready: metav1.ConditionTrue},
	}
}

func TestSyncConditionsAsKstatusAndKubectlWaitRead(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC))
	for _, tc := range conditionCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := v1alpha1.OntoPlatform{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.Kind},
				ObjectMeta: metav1.ObjectMeta{Name: "onto-production", Namespace: "onto", Generation: tc.generation},
				Spec:       v1alpha1.OntoPlatformSpec{Version: "1.5.0"},
			}
			p.Status.ObservedGeneration = tc.observed
			set := func(typ string, st metav1.ConditionStatus, reason, msg string) {
				meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg, LastTransitionTime: now})
			}
			tc.write(&p.Status, set)
			p.Status.SyncConditions(tc.generation, now)

			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: obj}
			unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
			data, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, data, filepath.Join("testdata", "conditions", tc.name+".yaml"))

			res, err := kstatus.Compute(u)
			if err != nil {
				t.Fatalf("kstatus: %v", err)
			}
			if res.Status != tc.kstatus {
				t.Errorf("kstatus = %s (%s), want %s", res.Status, res.Message, tc.kstatus)
			}
			ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
			if ready == nil || ready.Status != tc.ready {
				t.Errorf("Ready = %+v, want %s", ready, tc.ready)
			}
			inFlight := meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionReconciling)
			if inFlight != p.Status.InFlight() {
				t.Errorf("Reconciling=%v but Progressing in flight=%v", inFlight, p.Status.InFlight())
			}
			if !inFlight && p.Status.ObservedGeneration != tc.generation {
				t.Errorf("observedGeneration = %d after a finished run, want %d", p.Status.ObservedGeneration, tc.generation)
			}
		})
	}
}
