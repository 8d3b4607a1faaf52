/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// TestNoOpApplyReadsNoWorkloadAgain: the apply of an unchanged platform writes nothing
// and checks its health from the workloads its plan listed, with fewer GETs than the
// platform has workloads (one GET per workload before), and still records every
// component ready in the status.
func TestNoOpApplyReadsNoWorkloadAgain(t *testing.T) {
	t.Parallel()
	c, _, p := ontotest.InstallExample(t, "minimal.yaml")
	counter := bench.NewCounter()
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(counter.Wrap)
	clients, err := kube.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := ontotest.Desired(t, p)
	workloads := 0
	for _, o := range d.Objects() {
		if health.IsWorkload(o) {
			workloads++
		}
	}
	opts := ontotest.ApplyOptions()
	opts.Release = ontotest.Release(t, p.Spec.Version)
	counter.Take() // discovery by kube.New
	res, err := (&apply.Applier{Clients: clients, Now: time.Now}).Apply(t.Context(), d, opts)
	if err != nil {
		t.Fatalf("no-op apply: %v", err)
	}
	counts := counter.Take()
	if res.Plan.HasChanges() || counts.Writes() != 0 {
		t.Fatalf("no-op apply: plan has changes %v, sent %s", res.Plan.HasChanges(), counts)
	}
	if workloads < 3 || counts[bench.VerbGet] >= workloads {
		t.Errorf("no-op apply of %d workloads sent %s: want fewer GETs than workloads (their status comes from the plan's lists)", workloads, counts)
	}
	t.Logf("no-op apply of %d workloads: %s", workloads, counts)
	live := ontotest.Live(t, clients, p.Namespace, p.Name)
	ready := 0
	for _, comp := range live.Status.Components {
		if comp.Ready {
			ready++
		}
	}
	if live.Status.Phase != v1alpha1.PhaseRunning || ready != len(live.Status.Components) || ready == 0 {
		t.Errorf("status after the no-op apply: phase %s, %d of %d components ready", live.Status.Phase, ready, len(live.Status.Components))
	}
}
