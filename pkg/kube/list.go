/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/json"
)

// List lists resource in namespace (every namespace when empty) whose labels match
// selector (everything when empty): what the dynamic client's List returns, read from
// the same REST client, decoded in one pass.
//
// Why not the dynamic client itself: its decoder reads a list's bytes four times (a
// scan for the kind, a validity scan, the items split out, then each item scanned and
// decoded), which was most of a large plan's CPU (docs/benchmarks.md); this decoder
// scans once and decodes once.
func (c *Clients) List(ctx context.Context, resource schema.GroupVersionResource, namespace, selector string) (*unstructured.UnstructuredList, error) {
	path := []string{"/api", resource.Version}
	if resource.Group != "" {
		path = []string{"/apis", resource.Group, resource.Version}
	}
	req := c.rest.Get().AbsPath(path...).NamespaceIfScoped(namespace, namespace != "").Resource(resource.Resource)
	if selector != "" {
		req = req.Param("labelSelector", selector)
	}
	raw, err := req.Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	return decodeList(raw)
}

// decodeList decodes a list answer as unstructured.UnstructuredList does: numbers that
// are integers as int64, each item with the list's apiVersion and its kind (the list's
// less "List") when it carries none.
func decodeList(raw []byte) (*unstructured.UnstructuredList, error) {
	var answer struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Metadata   map[string]any   `json:"metadata"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.UnmarshalCaseSensitivePreserveInts(raw, &answer); err != nil {
		return nil, fmt.Errorf("decode the list: %w", err)
	}
	if !strings.HasSuffix(answer.Kind, "List") {
		return nil, fmt.Errorf("decode the list: kind %q is not a list", answer.Kind)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": answer.APIVersion, "kind": answer.Kind}, Items: make([]unstructured.Unstructured, len(answer.Items))}
	if answer.Metadata != nil {
		list.Object["metadata"] = answer.Metadata
	}
	itemKind := strings.TrimSuffix(answer.Kind, "List")
	for i, item := range answer.Items {
		if item == nil {
			return nil, fmt.Errorf("decode the list: item %d is not an object", i)
		}
		u := unstructured.Unstructured{Object: item}
		if u.GetKind() == "" {
			u.SetKind(itemKind)
		}
		if u.GetAPIVersion() == "" {
			u.SetAPIVersion(answer.APIVersion)
		}
		list.Items[i] = u
	}
	return list, nil
}
