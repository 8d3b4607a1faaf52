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
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

func TestStatusView(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ready := func(name, plane, kind string, n int32) status.Component {
		return status.Component{Name: name, Plane: plane, Kind: kind, Workload: name, DesiredReplicas: n, ReadyReplicas: n, Version: "1.5.0", Ready: true}
	}
	recordedAt := func(d time.Duration) *metav1.Time { t := ago(d); return &t }
	tests := []struct {
		name   string
		report status.Report
	}{
		{name: "ready", report: status.Report{
			Name: "onto-production", Namespace: "onto-system", Phase: v1alpha1.PhaseRunning,
			SpecVersion: "1.5.0", Version: "1.5.0", Generation: 2, ObservedGeneration: 2, Ready: true, ReadyComponents: "3/3",
			ConditionsRecordedAt: recordedAt(5 * time.Minute),
			Conditions: []status.Condition{
				{Type: "Ready", Status: "True", Reason: "ComponentsReady", Message: "3/3 components ready", LastTransitionTime: ago(5 * time.Minute)},
				{Type: "Progressing", Status: "False", Reason: "Idle", LastTransitionTime: ago(5 * time.Minute)},
				{Type: "Degraded", Status: "False", Reason: "ComponentsReady", LastTransitionTime: ago(26 * time.Hour)},
			},
			Components: []status.Component{
				ready("postgres", "infrastructure", "StatefulSet", 3),
				ready("ontology-service", "control", "Deployment", 2),
				ready("gateway", "gateway", "Deployment", 3),
			},
			History: []v1alpha1.Revision{
				{Revision: 1, Version: "1.4.0", Time: metav1.NewTime(now.Add(-48 * time.Hour)), Result: v1alpha1.RevisionSucceeded, Action: "apply"},
				{Revision: 2, Version: "1.5.0", Time: metav1.NewTime(now.Add(-5 * time.Minute)), Result: v1alpha1.RevisionSucceeded, Action: "upgrade"},
			},
			ObservedAt: metav1.NewTime(now),
		}},
		{name: "deleting", report: status.Report{
			Name: "onto-dev", Namespace: "onto-dev", Phase: v1alpha1.PhaseRunning,
			SpecVersion: "1.5.0", Version: "1.5.0", Generation: 2, ObservedGeneration: 2, Ready: true, ReadyComponents: "3/3",
			DeletingSince: recordedAt(10 * time.Minute), Finalizers: []string{"onto.paas/uninstall"},
			Components: []status.Component{
				ready("postgres", "infrastructure", "StatefulSet", 1),
			},
			ObservedAt: metav1.NewTime(now),
		}},
		{name: "upgrading-degraded", report: status.Report{
			Name: "onto-dev", Namespace: "onto-dev", Phase: v1alpha1.PhaseDegraded,
			SpecVersion: "1.6.0", Version: "1.5.0", Generation: 4, ObservedGeneration: 3, ReadyComponents: "1/3",
			Conditions: []status.Condition{
				{Type: "Ready", Status: "False", Reason: "ComponentsNotReady", Message: "ontology-service: 0/1 ready", LastTransitionTime: ago(90 * time.Second)},
				{Type: "Progressing", Status: "True", Reason: "Upgrading", Message: "upgrading to 1.6.0", LastTransitionTime: ago(2 * time.Minute)},
				{Type: "Degraded", Status: "True", Reason: "ComponentsNotReady", LastTransitionTime: ago(90 * time.Second)},
			},
			Components: []status.Component{
				ready("postgres", "infrastructure", "StatefulSet", 1),
				{Name: "ontology-service", Plane: "control", Kind: "Deployment", Workload: "ontology-service", DesiredReplicas: 1, Version: "1.5.0", Message: "scaled to 0 replicas, the spec asks for 1"},
				{Name: "ontology-service", Plane: "control", Kind: "Deployment", Workload: "ontology-service-canary", DesiredReplicas: 1, ReadyReplicas: 1, Version: "1.6.0", Ready: true, Canary: true},
				{Name: "gateway", Plane: "gateway", Kind: "Deployment", Workload: "gateway", DesiredReplicas: 1, Message: "not installed"},
			},
			Upgrade: &v1alpha1.UpgradeStatus{From: "1.5.0", To: "1.6.0", StartedAt: &metav1.Time{Time: now.Add(-2 * time.Minute)},
				Done: []string{"postgres"}, Current: "ontology-service", Step: v1alpha1.StepSoak},
			ObservedAt: metav1.NewTime(now),
		}},
		// The last apply recorded every component ready; one was scaled down since.
		{name: "recorded-ready-live-not", report: status.Report{
			Name: "onto-production", Namespace: "onto-system", Phase: v1alpha1.PhaseRunning,
			SpecVersion: "1.5.0", Version: "1.5.0", Generation: 2, ObservedGeneration: 2, ReadyComponents: "2/3",
			ConditionsRecordedAt: recordedAt(3 * time.Minute),
			Conditions: []status.Condition{
				{Type: "Ready", Status: "True", Reason: "ComponentsReady", Message: "3/3 components ready", LastTransitionTime: ago(26 * time.Hour), LiveDisagrees: true},
				{Type: "Progressing", Status: "False", Reason: "Idle", LastTransitionTime: ago(3 * time.Minute)},
				{Type: "Degraded", Status: "False", Reason: "ComponentsReady", LastTransitionTime: ago(26 * time.Hour)},
			},
			Components: []status.Component{
				ready("postgres", "infrastructure", "StatefulSet", 3),
				{Name: "ontology-service", Plane: "control", Kind: "Deployment", Workload: "ontology-service", DesiredReplicas: 2, ReadyReplicas: 1, Version: "1.5.0", Message: "scaled to 1 replicas, the spec asks for 2"},
				ready("gateway", "gateway", "Deployment", 3),
			},
			ObservedAt: metav1.NewTime(now),
		}},
		// The last apply did not wait and recorded Ready False; everything came up since.
		{name: "recorded-not-ready-live-ready", report: status.Report{
			Name: "onto-production", Namespace: "onto-system", Phase: v1alpha1.PhaseInstalling,
			SpecVersion: "1.5.0", Generation: 1, Ready: true, ReadyComponents: "2/2",
			ConditionsRecordedAt: recordedAt(10 * time.Minute),
			Conditions: []status.Condition{
				{Type: "Ready", Status: "False", Reason: "RollingOut", Message: "0/2 components ready; not waited for (--wait=false)", LastTransitionTime: ago(10 * time.Minute), LiveDisagrees: true},
			},
			Components: []status.Component{
				ready("postgres", "infrastructure", "StatefulSet", 1),
				ready("gateway", "gateway", "Deployment", 1),
			},
			ObservedAt: metav1.NewTime(now),
		}},
		{name: "never-applied", report: status.Report{
			Name: "onto-new", Namespace: "onto-new", SpecVersion: "1.6.0", Generation: 1, ReadyComponents: "0/0",
			Conditions: []status.Condition{}, Components: []status.Component{}, ObservedAt: metav1.NewTime(now),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []printers.Format{printers.FormatText, printers.FormatJSON} {
				var out bytes.Buffer
				if err := printers.Write(&out, f, printers.Plain(&out), printers.StatusView{Report: &tc.report}); err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, out.Bytes(), filepath.Join("testdata", t.Name()+"."+string(f)+".golden"))
			}
		})
	}
}

// TestStatusListView: status -A as a table, wide, as names, as JSON and through a
// jsonpath, from the same reports.
func TestStatusListView(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	created := func(d time.Duration) *metav1.Time { c := metav1.NewTime(now.Add(-d)); return &c }
	reports := []*status.Report{
		{Name: "onto-production", Namespace: "onto-system", Phase: v1alpha1.PhaseRunning, SpecVersion: "1.5.0", Version: "1.5.0",
			Generation: 2, ObservedGeneration: 2, Ready: true, ReadyComponents: "13/13", CreatedAt: created(49 * time.Hour),
			Conditions: []status.Condition{}, Components: []status.Component{{Name: "gateway", Ready: true}}, ObservedAt: metav1.NewTime(now)},
		{Name: "tenant-a", Namespace: "tenant-a", Phase: v1alpha1.PhaseDegraded, SpecVersion: "1.6.0", Version: "1.5.0",
			Generation: 4, ObservedGeneration: 3, ReadyComponents: "11/13", CreatedAt: created(3 * time.Minute),
			Conditions: []status.Condition{}, ObservedAt: metav1.NewTime(now),
			Components: []status.Component{{Name: "gateway", Ready: false}, {Name: "nessie", Ready: false}, {Name: "postgres", Ready: true}}},
		{Name: "never-applied", Namespace: "tenant-b", SpecVersion: "1.5.0", Generation: 1, ReadyComponents: "0/0",
			Conditions: []status.Condition{}, Components: []status.Component{}, ObservedAt: metav1.NewTime(now)},
	}
	for _, f := range []printers.Format{printers.FormatText, printers.FormatWide, printers.FormatName, printers.FormatJSON,
		`jsonpath={range .items[*]}{.namespace}/{.name}={.phase}{"\n"}{end}`} {
		var out bytes.Buffer
		view := printers.StatusListView{Items: reports, AllNamespaces: true, Wide: f == printers.FormatWide}
		if err := printers.Write(&out, f, printers.Plain(&out), view); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, out.Bytes(), filepath.Join("testdata", t.Name(), string(f.Base())+".golden"))
	}
	var out bytes.Buffer
	if err := printers.Write(&out, printers.FormatText, printers.Plain(&out), printers.StatusListView{Items: []*status.Report{}}); err != nil || out.String() != "No OntoPlatforms found.\n" {
		t.Fatalf("empty list: %q, %v", out.String(), err)
	}
}
