/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// Planes that move as a whole rather than component by component: tenancy (the
// namespace, quota, policies) goes first, from the target, and observability last.
var (
	firstPlane = v1alpha1.Plane("tenancy")
	lastPlane  = v1alpha1.Plane("observability")
)

// TrackLabel marks a canary's objects and pods (value TrackCanary).
const (
	TrackLabel  = v1alpha1.LabelTrack
	TrackCanary = v1alpha1.TrackCanary
)

// componentOf is the component an object belongs to: its app.kubernetes.io/name.
func componentOf(o *unstructured.Unstructured) string { return health.ComponentName(o) }

// Steps lists the components that move, one step each, in plane order (reverse for a
// rollback), within a plane in the spec's order: every app.kubernetes.io/name of a workload in either state outside the
// first and last planes, so a component the target drops or adds moves too, and
// redis-sentinel is a step of its own.
func Steps(to, from *plan.Desired, order []string, reverse bool) []string {
	var steps []string
	seen := map[string]bool{}
	for _, d := range []*plan.Desired{to, from} {
		for _, pl := range d.Planes {
			if pl.Name == firstPlane || pl.Name == lastPlane {
				continue
			}
			for _, o := range pl.Objects {
				c := componentOf(o)
				if !health.IsWorkload(o) || c == "" || seen[c] {
					continue
				}
				seen[c] = true
				steps = append(steps, c)
			}
		}
	}
	rank := planeRanks(to, from)
	// Within a plane, the spec's order (Spec.Components); others (redis-sentinel) after.
	index := func(c string) int {
		if i := slices.Index(order, c); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(steps, func(a, b string) int {
		if rank[a] != rank[b] {
			return rank[a] - rank[b]
		}
		return index(a) - index(b)
	})
	if reverse {
		slices.Reverse(steps)
	}
	return steps
}

// planeRanks orders components by their plane in the target, else in the start state.
func planeRanks(ds ...*plan.Desired) map[string]int {
	rank := map[string]int{}
	for _, d := range ds {
		for _, pl := range d.Planes {
			r := slices.Index(v1alpha1.Planes(), pl.Name)
			for _, o := range pl.Objects {
				if _, ok := rank[componentOf(o)]; !ok {
					rank[componentOf(o)] = r
				}
			}
		}
	}
	return rank
}

// mix is the desired state between two steps: the target's objects for the
// components in moved and for the first plane, the start state's for the others and,
// unless final, for the last plane. The platform object (the stored spec) stays the
// start state's until the end, so a stopped run leaves the spec it started from.
// extra objects (a canary) join the plane of their component.
func mix(from, to *plan.Desired, moved map[string]bool, extra ...*unstructured.Unstructured) *plan.Desired {
	takeTarget := func(plane v1alpha1.Plane, o *unstructured.Unstructured) bool {
		if plane == firstPlane {
			return true
		}
		if plane == lastPlane {
			return false
		}
		return moved[componentOf(o)]
	}
	d := &plan.Desired{CRD: from.CRD, Platform: from.Platform, InventoryID: from.InventoryID, Namespace: from.Namespace, Version: from.Version}
	for _, plane := range v1alpha1.Planes() {
		var objs []*unstructured.Unstructured
		for _, o := range planeObjects(to, plane) {
			if takeTarget(plane, o) {
				objs = append(objs, o)
			}
		}
		for _, o := range planeObjects(from, plane) {
			if !takeTarget(plane, o) {
				objs = append(objs, o)
			}
		}
		for _, o := range extra {
			if o.GetLabels()[plan.PlaneLabel] == string(plane) {
				objs = append(objs, o)
			}
		}
		if len(objs) > 0 {
			d.Planes = append(d.Planes, render.Plane{Name: plane, Objects: objs})
		}
	}
	return d
}

func planeObjects(d *plan.Desired, plane v1alpha1.Plane) []*unstructured.Unstructured {
	for _, pl := range d.Planes {
		if pl.Name == plane {
			return pl.Objects
		}
	}
	return nil
}

// workloadsOf returns the workloads of component c in d.
func workloadsOf(d *plan.Desired, c string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range d.Objects() {
		if health.IsWorkload(o) && componentOf(o) == c {
			out = append(out, o)
		}
	}
	return out
}

// canaryOf is the canary Deployment of target Deployment dep: one replica of the new
// pod template, beside the old pods, selected by the same Service. Its selector adds
// the track label, so neither Deployment's ReplicaSets adopt the other's pods.
func canaryOf(dep *unstructured.Unstructured) *unstructured.Unstructured {
	c := dep.DeepCopy()
	c.SetName(dep.GetName() + "-canary")
	labels := maps.Clone(c.GetLabels())
	labels[TrackLabel] = TrackCanary
	c.SetLabels(labels)
	// One pod, always: no autoscaler scales a canary.
	annotations := c.GetAnnotations()
	delete(annotations, v1alpha1.AnnotationReplicas)
	if len(annotations) == 0 {
		annotations = nil
	}
	c.SetAnnotations(annotations)
	_ = unstructured.SetNestedField(c.Object, int64(1), "spec", "replicas")
	_ = unstructured.SetNestedField(c.Object, TrackCanary, "spec", "selector", "matchLabels", TrackLabel)
	_ = unstructured.SetNestedField(c.Object, TrackCanary, "spec", "template", "metadata", "labels", TrackLabel)
	return c
}

// noSurge reports whether Deployment dep rolls with maxSurge 0 (pods that hold a
// scarce resource, such as GPUs): its canary then takes the place of one old pod.
func noSurge(dep *unstructured.Unstructured) bool {
	v, found, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "strategy", "rollingUpdate", "maxSurge")
	if !found {
		return false
	}
	switch s := v.(type) {
	case int64:
		return s == 0
	case string:
		return s == "0" || s == "0%"
	}
	return false
}

// replicasOf is a workload's rendered replicas; ok is false when an autoscaler owns
// them (the count it renders is for its creation only, and not applied afterwards).
func replicasOf(w *unstructured.Unstructured) (int64, bool) {
	if v1alpha1.CreateOnlyReplicas(w.GetAnnotations()) {
		return 0, false
	}
	n, found, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
	return n, found
}

// withPartition returns StatefulSet sts updating only ordinals >= partition.
func withPartition(sts *unstructured.Unstructured, partition int64) *unstructured.Unstructured {
	c := sts.DeepCopy()
	_ = unstructured.SetNestedField(c.Object, "RollingUpdate", "spec", "updateStrategy", "type")
	_ = unstructured.SetNestedField(c.Object, partition, "spec", "updateStrategy", "rollingUpdate", "partition")
	return c
}

// withReplicas returns w with replicas n.
func withReplicas(w *unstructured.Unstructured, n int64) *unstructured.Unstructured {
	c := w.DeepCopy()
	_ = unstructured.SetNestedField(c.Object, n, "spec", "replicas")
	return c
}

// replace returns d with the objects of the same kind and name as objs swapped in.
func replace(d *plan.Desired, objs ...*unstructured.Unstructured) *plan.Desired {
	out := *d
	out.Planes = nil
	for _, pl := range d.Planes {
		cp := render.Plane{Name: pl.Name, Objects: slices.Clone(pl.Objects)}
		for i, o := range cp.Objects {
			for _, r := range objs {
				if r.GetKind() == o.GetKind() && r.GetName() == o.GetName() {
					cp.Objects[i] = r
				}
			}
		}
		out.Planes = append(out.Planes, cp)
	}
	return &out
}
