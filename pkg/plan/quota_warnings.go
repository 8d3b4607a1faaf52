/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// quotaWarnings warns of each rendered ResourceQuota whose hard limit of a resource is
// below what its namespace already uses (the live quota's status.used). The API server
// takes the smaller quota without a word, and from then on refuses every new pod, a
// rollout's or a rescheduled one's included, until the usage falls under it: a
// shrunk quota must not pass as one more updated field. A quota not yet created has
// no usage and is not warned of.
func quotaWarnings(objs []*unstructured.Unstructured, live map[string]*unstructured.Unstructured) []string {
	var out []string
	for _, obj := range objs {
		ref := RefOf(obj)
		if ref.Group != "" || ref.Kind != "ResourceQuota" {
			continue
		}
		liveObj := live[ref.key()]
		if liveObj == nil {
			continue
		}
		hard, _, _ := unstructured.NestedMap(obj.Object, "spec", "hard")
		used, _, _ := unstructured.NestedMap(liveObj.Object, "status", "used")
		names := make([]string, 0, len(hard))
		for name := range hard {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			limit, ok := quantityOf(hard[name])
			if !ok {
				continue
			}
			usage, ok := quantityOf(used[name])
			if !ok || limit.Cmp(usage) >= 0 {
				continue
			}
			out = append(out, fmt.Sprintf("%s: the new hard limit of %s, %s, is below what namespace %s already uses, %s: "+
				"the API server accepts it but refuses every new pod (a rollout's or a rescheduled one's too) until the usage falls under it; "+
				"raise spec.tenancy.resourceQuota[%s], or bring the usage down first",
				ref, name, limit.String(), ref.Namespace, usage.String(), name))
		}
	}
	return out
}

// quantityOf reads a quantity of a decoded object: a string ("4Gi") or a number.
func quantityOf(v any) (resource.Quantity, bool) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case int64:
		s = fmt.Sprint(t)
	case float64:
		s = fmt.Sprint(t)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}
