/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// Label keys read from workloads.
const (
	nameLabel    = "app.kubernetes.io/name"
	versionLabel = "app.kubernetes.io/version"
	planeLabel   = "onto.paas/plane"
)

// observeConcurrency bounds the workload reads in flight at once.
const observeConcurrency = 8

// ObserveComponents reads each desired workload from the cluster, concurrently, and
// reports its readiness as the status of the component it runs, in the order of
// workloads. A missing workload is reported as not ready, not as an error.
func ObserveComponents(ctx context.Context, c *kube.Clients, workloads []*unstructured.Unstructured) ([]v1alpha1.ComponentStatus, error) {
	var ws []*unstructured.Unstructured
	for _, w := range workloads {
		if IsWorkload(w) {
			ws = append(ws, w)
		}
	}
	out := make([]v1alpha1.ComponentStatus, len(ws))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(observeConcurrency)
	for i, w := range ws {
		g.Go(func() (err error) {
			out[i], err = observeComponent(gctx, c, w)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// observeComponent reads one workload and reports its component's status.
func observeComponent(ctx context.Context, c *kube.Clients, w *unstructured.Unstructured) (v1alpha1.ComponentStatus, error) {
	cs := v1alpha1.ComponentStatus{
		Name:  componentName(w),
		Plane: w.GetLabels()[planeLabel],
		Kind:  w.GetKind(),
	}
	ri, err := c.Resource(w)
	if err != nil {
		return cs, err
	}
	live, err := ri.Get(ctx, w.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cs.Message = "not installed"
		cs.DesiredReplicas, _ = Replicas(w)
		return cs, nil
	}
	if err != nil {
		return cs, fmt.Errorf("get %s: %w", kube.Ref(w), err)
	}
	cs.DesiredReplicas, cs.ReadyReplicas = Replicas(live)
	cs.Version = live.GetLabels()[versionLabel]
	r := Check(live)
	cs.Ready = r.Ready
	if !r.Ready {
		cs.Message = r.Message
	}
	return cs, nil
}

func componentName(w *unstructured.Unstructured) string {
	if n := w.GetLabels()[nameLabel]; n != "" {
		return n
	}
	return w.GetName()
}

// CountReady returns how many components are ready, of how many.
func CountReady(cs []v1alpha1.ComponentStatus) (ready, total int) {
	for _, c := range cs {
		if c.Ready {
			ready++
		}
	}
	return ready, len(cs)
}
