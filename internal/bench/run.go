/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// Run is one measured plan or apply.
type Run struct {
	Wall     time.Duration
	Requests Counts
	Plan     *plan.Plan
	// Events of an apply, with the time since the run started.
	Events []TimedEvent
}

// TimedEvent is an apply event and when it came, since the run started.
type TimedEvent struct {
	At time.Duration
	apply.Event
}

// counted returns fresh clients on a copy of cfg whose requests counter counts.
func counted(cfg *rest.Config, counter *Counter) (*kube.Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(counter.Wrap)
	return kube.New(cfg)
}

// Plan plans d with fresh clients, as one `kubectl onto plan` does after rendering.
func Plan(ctx context.Context, cfg *rest.Config, d *plan.Desired) (*Run, error) {
	counter := NewCounter()
	start := time.Now()
	clients, err := counted(cfg, counter)
	if err != nil {
		return nil, err
	}
	p, err := (&plan.Planner{Clients: clients}).Plan(ctx, d)
	if err != nil {
		return nil, err
	}
	return &Run{Wall: time.Since(start), Requests: counter.Take(), Plan: p}, nil
}

// Apply plans and applies d with fresh clients, as one `kubectl onto apply` does after
// rendering, and records the events with their times.
func Apply(ctx context.Context, cfg *rest.Config, d *plan.Desired, opts apply.Options) (*Run, error) {
	counter := NewCounter()
	run := &Run{}
	var mu sync.Mutex
	start := time.Now()
	clients, err := counted(cfg, counter)
	if err != nil {
		return nil, err
	}
	a := apply.NewApplier(clients, nil)
	a.Observer = func(e apply.Event) {
		mu.Lock()
		defer mu.Unlock()
		run.Events = append(run.Events, TimedEvent{At: time.Since(start), Event: e})
	}
	res, err := a.Apply(ctx, d, opts)
	if err != nil {
		return nil, err
	}
	run.Plan = res.Plan
	run.Wall = time.Since(start)
	run.Requests = counter.Take()
	return run, nil
}

// Options are the apply options of the measurements: the CLI's defaults.
func Options() apply.Options {
	o := apply.DefaultOptions()
	o.Holder = "onto-bench"
	return o
}

// PlaneTiming is how one plane of an apply went, as times since the run started.
type PlaneTiming struct {
	Name    string
	Started time.Duration
	Ready   time.Duration
	// Workloads is the number of Deployments and StatefulSets the plane waited for.
	Workloads int
	// SlowestRollout is when the last of the plane's workloads was seen ready (zero
	// without workloads): serving, the gate of the next plane.
	SlowestRollout time.Duration
	// Available is when the last of the plane's workloads was seen Available in the
	// health check after all planes (minReadySeconds); Ready when none was waited for
	// there.
	Available time.Duration
}

// Beyond is the time the plane was still waited for after its slowest rollout.
func (p PlaneTiming) Beyond() time.Duration {
	if p.Workloads == 0 {
		return 0
	}
	return p.Ready - p.SlowestRollout
}

// Planes reads each plane's timing from the run's events (PlaneStarted, Waiting with
// Ready, PlaneReady), in apply order.
func (r *Run) Planes() ([]PlaneTiming, error) {
	var out []PlaneTiming
	index := map[string]int{}
	workloads := map[string]map[string]bool{}
	for _, e := range r.Events {
		switch e.Type {
		case apply.EventPlaneStarted:
			index[e.Plane] = len(out)
			out = append(out, PlaneTiming{Name: e.Plane, Started: e.At})
			workloads[e.Plane] = map[string]bool{}
		case apply.EventWaiting:
			i, ok := index[e.Plane]
			if !ok {
				return nil, fmt.Errorf("event %s of plane %s before the plane started", e.Type, e.Plane)
			}
			if out[i].Ready != 0 {
				// The health check after all planes: Available.
				if e.Ready {
					out[i].Available = max(out[i].Available, e.At)
				}
				continue
			}
			workloads[e.Plane][e.Object] = true
			if e.Ready {
				out[i].SlowestRollout = max(out[i].SlowestRollout, e.At)
			}
		case apply.EventPlaneReady:
			i, ok := index[e.Plane]
			if !ok {
				return nil, fmt.Errorf("plane %s ready before it started", e.Plane)
			}
			out[i].Ready = e.At
			out[i].Available = e.At
			out[i].Workloads = len(workloads[e.Plane])
		}
	}
	for _, p := range out {
		if p.Ready == 0 {
			return nil, fmt.Errorf("plane %s never became ready", p.Name)
		}
	}
	return out, nil
}
