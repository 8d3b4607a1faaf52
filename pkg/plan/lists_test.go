/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestLists: a kept list answers for every name of its resource and namespace (nil for
// one it did not hold), and for nothing else; a nil Lists keeps and knows nothing.
func TestLists(t *testing.T) {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gateway := &unstructured.Unstructured{}
	gateway.SetName("gateway")
	l := &Lists{}
	l.keep(deployments, "onto", []*unstructured.Unstructured{gateway})
	tests := []struct {
		name      string
		lists     *Lists
		resource  schema.GroupVersionResource
		namespace string
		object    string
		want      *unstructured.Unstructured
		listed    bool
	}{
		{"listed and held", l, deployments, "onto", "gateway", gateway, true},
		{"listed, not held: it does not exist", l, deployments, "onto", "nessie", nil, true},
		{"another namespace was not listed", l, deployments, "other", "gateway", nil, false},
		{"another resource was not listed", l, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "onto", "gateway", nil, false},
		{"nil lists", nil, deployments, "onto", "gateway", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, listed := tc.lists.Find(tc.resource, tc.namespace, tc.object)
			if got != tc.want || listed != tc.listed {
				t.Errorf("Find = %v, %v; want %v, %v", got, listed, tc.want, tc.listed)
			}
		})
	}
	var none *Lists
	none.keep(deployments, "onto", []*unstructured.Unstructured{gateway}) // must not panic
}
