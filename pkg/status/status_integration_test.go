/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package status_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// install applies examples/minimal.yaml in a fresh namespace through the library path
// apply uses, and returns the cluster, clients and platform.
func install(t *testing.T) (*testcluster.Cluster, *kube.Clients, *v1alpha1.OntoPlatform) {
	t.Helper()
	return ontotest.InstallExample(t, "minimal.yaml")
}

// enabledComponents are the names of the spec's enabled components.
func enabledComponents(p *v1alpha1.OntoPlatform) map[string]bool {
	out := map[string]bool{}
	for _, c := range p.Spec.Components() {
		if c.Enabled() {
			out[c.Name] = true
		}
	}
	return out
}

func TestStatusOfAppliedPlatform(t *testing.T) {
	_, clients, p := install(t)
	obs := &status.Observer{Clients: clients}
	// No name: the only platform of the namespace.
	r, err := obs.Observe(t.Context(), p.Namespace, "")
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	if r.Name != p.Name || r.Phase != v1alpha1.PhaseRunning || r.Version != p.Spec.Version || r.SpecVersion != p.Spec.Version {
		t.Errorf("report %s phase %q version %q spec %q, want %s Running %s", r.Name, r.Phase, r.Version, r.SpecVersion, p.Name, p.Spec.Version)
	}
	if !r.Ready || r.Generation == 0 || r.ObservedGeneration != r.Generation {
		t.Errorf("ready %v generation %d observed %d, want ready and observed", r.Ready, r.Generation, r.ObservedGeneration)
	}
	want := enabledComponents(p)
	for _, c := range r.Components {
		if !c.Ready || c.Version != p.Spec.Version || c.ReadyReplicas != c.DesiredReplicas || c.DesiredReplicas < 1 || c.Plane == "" {
			t.Errorf("component %+v: want ready at version %s with its replicas and plane", c, p.Spec.Version)
		}
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("components missing from the report: %v", want)
	}
	if len(r.Conditions) == 0 || r.Conditions[0].Type != v1alpha1.ConditionReady || r.Conditions[0].Status != "True" {
		t.Errorf("conditions %+v, want Ready=True first", r.Conditions)
	}
	if len(r.History) == 0 {
		t.Error("no revision history in the report")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := obs.Wait(ctx, p.Namespace, p.Name, nil); err != nil {
		t.Errorf("wait on a ready platform: %v", err)
	}
}

func TestStatusScaledToZero(t *testing.T) {
	c, clients, p := install(t)
	const scaled = v1alpha1.ComponentOntologyService
	patch := []byte(`{"spec":{"replicas":0}}`)
	if _, err := c.Kube.AppsV1().Deployments(p.Namespace).Patch(t.Context(), scaled, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	obs := &status.Observer{Clients: clients}
	r, err := obs.Observe(t.Context(), p.Namespace, p.Name)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	if r.Ready {
		t.Error("report ready with a component scaled to 0")
	}
	found := false
	for _, comp := range r.Components {
		if comp.Name != scaled {
			if !comp.Ready {
				t.Errorf("component %s not ready: %s", comp.Name, comp.Message)
			}
			continue
		}
		found = true
		if comp.Ready || comp.DesiredReplicas != 1 || !strings.Contains(comp.Message, "scaled to 0") {
			t.Errorf("scaled component %+v: want not ready, 1 desired, message about the scale", comp)
		}
	}
	if !found {
		t.Fatalf("%s missing from the report", scaled)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err = obs.Wait(ctx, p.Namespace, p.Name, nil)
	var nr *status.NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("wait: got %v, want a NotReadyError", err)
	}
	if nr.Component != scaled || !strings.Contains(err.Error(), scaled) {
		t.Errorf("wait error %q names %q, want %s", err, nr.Component, scaled)
	}
}

func TestStatusNoPlatform(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&status.Observer{Clients: clients}).Observe(t.Context(), ns, "")
	var nf *inventory.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "no OntoPlatform in namespace "+ns) {
		t.Errorf("observe an empty namespace: %v, want a NotFoundError naming it", err)
	}
	_, err = (&status.Observer{Clients: clients}).Observe(t.Context(), ns, "nope")
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), ns+"/nope not found") {
		t.Errorf("observe a missing platform: %v, want a NotFoundError", err)
	}
}
