/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// finalReadTimeout bounds the reads that explain a wait that ended, which run after
// the caller's context is done.
const finalReadTimeout = 15 * time.Second

// NotReadyError says which component was not ready when a wait ended, and why, from
// its pods when they show a problem.
type NotReadyError struct {
	Platform string
	// Component is the first component not ready, in plane order.
	Component string
	Workload  string
	Reason    string
	// More counts the other components not ready.
	More int
	Err  error
}

func (e *NotReadyError) Error() string {
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" (and %d more not ready)", e.More)
	}
	return fmt.Sprintf("OntoPlatform %s not ready: component %s (%s): %s%s", e.Platform, e.Component, e.Workload, e.Reason, more)
}

func (e *NotReadyError) Unwrap() error { return e.Err }

// Wait blocks, watching the platform's workloads, until every component is ready by
// the rules of Report.Ready, or ctx ends. onUpdate hears every readiness change and
// may be nil. On timeout it returns a *NotReadyError naming the first component that
// is not ready and why (pod problems such as Unschedulable or CrashLoopBackOff when
// its pods show one).
func (o *Observer) Wait(ctx context.Context, namespace, name string, onUpdate func(health.Update)) error {
	obs, err := o.observe(ctx, namespace, name)
	if err != nil {
		return err
	}
	if obs.report.Ready {
		return nil
	}
	w := &health.Waiter{Dynamic: o.Clients.Dynamic, Check: func(live *unstructured.Unstructured) health.Ready {
		return obs.expect[key(live)].Check(live)
	}}
	err = w.Wait(ctx, obs.targets, o.Clients.GVR, onUpdate)
	var nr *health.NotReadyError
	if !errors.As(err, &nr) {
		return err
	}
	// The wait ended: read everything again, so the error names the first component
	// in plane order that is still not ready, with its current reason.
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalReadTimeout)
	defer cancel()
	final, ferr := o.observe(readCtx, obs.report.Namespace, obs.report.Name)
	if ferr != nil {
		return errors.Join(err, ferr)
	}
	out := &NotReadyError{Platform: obs.report.Namespace + "/" + obs.report.Name, Err: err}
	for _, c := range final.report.Components {
		if c.Ready {
			continue
		}
		if out.Component != "" {
			out.More++
			continue
		}
		out.Component, out.Workload, out.Reason = c.Name, c.Kind+" "+c.Workload, c.Message
		for _, t := range final.targets {
			if t.GetName() == c.Workload && t.GetKind() == c.Kind && t.GetUID() != "" {
				if why, xerr := health.Explain(readCtx, o.Clients.Kube, t); xerr == nil && why != "" {
					out.Reason += ": " + why
				}
			}
		}
	}
	if out.Component == "" {
		return nil // ready just as the wait ended
	}
	return out
}
