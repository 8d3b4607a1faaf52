/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// planeObject is a rendered object and the plane it belongs to.
type planeObject struct {
	plane v1alpha1.Plane
	obj   *unstructured.Unstructured
}

// objectKey identifies an object within one platform (all share one namespace).
type objectKey struct {
	group, kind, name string
}

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{group: u.GroupVersionKind().Group, kind: u.GetKind(), name: u.GetName()}
}

// groupByPlane puts objects into their planes, in install order, and orders each plane
// by kind, then name, so the output never depends on map order or build order.
func groupByPlane(objs []planeObject) []Plane {
	byPlane := map[v1alpha1.Plane][]*unstructured.Unstructured{}
	for _, po := range objs {
		byPlane[po.plane] = append(byPlane[po.plane], po.obj)
	}
	var planes []Plane
	for _, pl := range v1alpha1.Planes() {
		objs := byPlane[pl]
		if len(objs) == 0 {
			continue
		}
		sort.SliceStable(objs, func(i, j int) bool { return less(objs[i], objs[j]) })
		planes = append(planes, Plane{Name: pl, Objects: objs})
	}
	return planes
}

func less(a, b *unstructured.Unstructured) bool {
	ra, rb := kindRank(a.GetKind()), kindRank(b.GetKind())
	if ra != rb {
		return ra < rb
	}
	if a.GetKind() != b.GetKind() {
		return a.GetKind() < b.GetKind()
	}
	return a.GetName() < b.GetName()
}

// kindRank is the apply order of kinds within a plane: what others reference first
// (identity, credentials, configuration, addresses), then workloads, then what watches
// or guards them. Kinds not listed come last, by name.
func kindRank(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "ServiceAccount":
		return 1
	case "Secret":
		return 2
	case "ConfigMap":
		return 3
	case "Service":
		return 4
	case "StatefulSet":
		return 5
	case "Deployment":
		return 6
	case "HorizontalPodAutoscaler":
		return 7
	case "PodDisruptionBudget":
		return 8
	case "Ingress":
		return 9
	case "NetworkPolicy":
		return 10
	case "ResourceQuota":
		return 11
	case "ServiceMonitor":
		return 12
	default:
		return 13
	}
}
