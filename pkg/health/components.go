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
	nameLabel    = v1alpha1.LabelName
	versionLabel = v1alpha1.LabelVersion
	planeLabel   = v1alpha1.LabelPlane
)

// observeConcurrency bounds the workload reads in flight at once.
const observeConcurrency = 8

// ObserveComponents reads each desired workload from the cluster, concurrently, and
// reports the status of the component it runs, in the order of workloads, by the
// rules `kubectl onto status` applies (see Expectation). workloads may hold every
// rendered object: a HorizontalPodAutoscaler among them gives the workload it scales
// its floor, and other kinds are skipped. A missing workload is reported as not
// installed, not as an error.
func ObserveComponents(ctx context.Context, c *kube.Clients, workloads []*unstructured.Unstructured) ([]v1alpha1.ComponentStatus, error) {
	return ObserveComponentsKnown(ctx, c, workloads, nil)
}

// ObserveComponentsKnown is ObserveComponents for a caller that read some workloads
// already: known returns a workload's live copy (nil when it does not exist) and true,
// or false for a workload to read from the API server. known may be nil.
func ObserveComponentsKnown(ctx context.Context, c *kube.Clients, workloads []*unstructured.Unstructured, known func(*unstructured.Unstructured) (*unstructured.Unstructured, bool)) ([]v1alpha1.ComponentStatus, error) {
	var ws []*unstructured.Unstructured
	for _, w := range workloads {
		if IsWorkload(w) {
			ws = append(ws, w)
		}
	}
	lives := make([]*unstructured.Unstructured, len(ws))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(observeConcurrency)
	for i, w := range ws {
		if known != nil {
			if live, ok := known(w); ok {
				lives[i] = live
				continue
			}
		}
		g.Go(func() (err error) {
			lives[i], err = getLive(gctx, c, w)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	byDesired := make(map[*unstructured.Unstructured]*unstructured.Unstructured, len(ws))
	for i, w := range ws {
		byDesired[w] = lives[i]
	}
	return ComponentStatuses(workloads, func(d *unstructured.Unstructured) *unstructured.Unstructured { return byDesired[d] }), nil
}

// ComponentStatuses is ObserveComponents once the reads are done: live returns the
// live counterpart of a desired workload, nil when it does not exist. It returns nil
// when objects hold no workload.
func ComponentStatuses(objects []*unstructured.Unstructured, live func(desired *unstructured.Unstructured) *unstructured.Unstructured) []v1alpha1.ComponentStatus {
	floors := autoscalerFloors(objects)
	var out []v1alpha1.ComponentStatus
	for _, d := range objects {
		// A canary is a step of an upgrade, not a component: its component's workload
		// reports the component.
		if !IsWorkload(d) || IsCanary(d) {
			continue
		}
		e := ExpectWorkload(d)
		if floor, ok := floors[d.GetKind()+"/"+d.GetName()]; ok && e.Replicas == nil {
			e.MinReplicas = floor
		}
		if l := live(d); l != nil {
			out = append(out, ComponentStatusOf(l, e))
		} else {
			out = append(out, MissingComponentStatus(ComponentName(d), d.GetKind(), e))
		}
	}
	return out
}

// IsCanary reports whether workload w is an upgrade's canary.
func IsCanary(w *unstructured.Unstructured) bool {
	return w.GetLabels()[v1alpha1.LabelTrack] == v1alpha1.TrackCanary
}

// autoscalerFloors maps "Kind/name" of each workload a HorizontalPodAutoscaler of
// objects scales to the autoscaler's minReplicas (one when unset, its API default).
func autoscalerFloors(objects []*unstructured.Unstructured) map[string]int32 {
	out := map[string]int32{}
	for _, o := range objects {
		if o.GroupVersionKind().Group != "autoscaling" || o.GetKind() != "HorizontalPodAutoscaler" {
			continue
		}
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "name")
		floor, found, _ := unstructured.NestedInt64(o.Object, "spec", "minReplicas")
		if !found {
			floor = 1
		}
		out[kind+"/"+name] = int32(floor)
	}
	return out
}

// getLive reads the live counterpart of desired workload w; nil when it does not exist.
func getLive(ctx context.Context, c *kube.Clients, w *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.Resource(w)
	if err != nil {
		return nil, err
	}
	live, err := ri.Get(ctx, w.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", kube.Ref(w), err)
	}
	return live, nil
}
