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
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

func TestClusterFleetView(t *testing.T) {
	created := &plan.Plan{Platform: plan.ObjectRef{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: "onto", Name: "onto"}, Version: "1.6.0",
		Planes:  []plan.PlanePlan{{Name: "data", Changes: []plan.Change{{Action: plan.ActionCreate, Object: plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "onto", Name: "nessie"}}}}},
		Summary: plan.Summary{Create: 1, Conflicts: 2}}
	plans := printers.ClusterFleetView{Fleet: "fleet.yaml", Action: "plan", Clusters: []printers.ClusterRow{
		{Cluster: "dev", Context: "dev", Wave: "canary", Result: "succeeded", Changes: 1, Conflicts: 2, Requests: 40,
			Platforms: []printers.FleetPlatform{{Namespace: "onto", Name: "onto", Result: "succeeded", Changes: 1, Plan: created}}},
		{Cluster: "prod-eu", Context: "prod-eu", Wave: "production", Result: "failed", Error: "cannot reach the Kubernetes API server\nmore"},
	}}
	applies := printers.ClusterFleetView{Fleet: "fleet.yaml", Action: "apply", StoppedAt: "canary", Clusters: []printers.ClusterRow{
		{Cluster: "dev", Context: "dev", Wave: "canary", Result: "failed", Changes: 4, DurationSeconds: 12.34, Requests: 310, Error: "onto/onto: component gateway failed"},
		{Cluster: "prod-eu", Context: "prod-eu", Wave: "production", Result: "not-started", Error: "wave canary failed"},
		{Cluster: "us", Context: "prod-us", Wave: "production", Result: "not-started", Error: "wave canary failed"},
	}}
	tests := []struct {
		name   string
		view   printers.ClusterFleetView
		format printers.Format
	}{
		{"plans.txt", plans, printers.FormatText},
		{"applies.txt", applies, printers.FormatText},
		{"applies.json", applies, printers.FormatJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.Write(&out, tc.format, printers.Plain(&out), tc.view); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestClusterFleetView", tc.name+".golden"))
		})
	}
}

func TestClusterStatusView(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	report := func(ns, version string, ready string) *status.Report {
		created := metav1.NewTime(now.Add(-3 * time.Hour))
		return &status.Report{Name: ns, Namespace: ns, Phase: v1alpha1.PhaseRunning, Version: version, SpecVersion: version,
			ReadyComponents: ready, ObservedAt: metav1.NewTime(now), CreatedAt: &created}
	}
	one := printers.ClusterStatusView{Fleet: "fleet.yaml", Clusters: []printers.ClusterStatusItem{
		{Cluster: "dev", Context: "dev", Wave: "canary", Platforms: []*status.Report{report("onto", "1.6.0", "5/5")}},
		{Cluster: "prod-eu", Context: "prod-eu", Wave: "production", Platforms: []*status.Report{}, Missing: []string{"onto/onto"}},
		{Cluster: "prod-us", Context: "prod-us", Wave: "production", Error: "cannot reach the Kubernetes API server at https://10.0.0.1:6443"},
	}}
	several := printers.ClusterStatusView{Fleet: "fleet.yaml", Clusters: []printers.ClusterStatusItem{
		{Cluster: "dev", Context: "dev", Wave: "canary", Platforms: []*status.Report{report("tenant-a", "1.6.0", "5/5"), report("tenant-b", "1.5.0", "4/5")}},
	}}
	tests := []struct {
		name   string
		view   printers.ClusterStatusView
		format printers.Format
	}{
		{"one-platform.txt", one, printers.FormatText},
		{"one-platform.json", one, printers.FormatJSON},
		{"several-platforms.txt", several, printers.FormatText},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.Write(&out, tc.format, printers.Plain(&out), tc.view); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestClusterStatusView", tc.name+".golden"))
		})
	}
}
