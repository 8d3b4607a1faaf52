/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// PlaneObjects is the rendered objects of one plane, as printed by `render`.
type PlaneObjects struct {
	Plane   string
	Objects []*unstructured.Unstructured
}

// WriteObjectsYAML prints objects as a multi-document YAML stream that kubectl, kapp
// and GitOps tools read, with a comment naming each object's plane.
func WriteObjectsYAML(out io.Writer, planes []PlaneObjects) error {
	for _, p := range planes {
		for _, obj := range p.Objects {
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				return fmt.Errorf("marshal %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
			if _, err := fmt.Fprintf(out, "---\n# plane: %s\n%s", p.Plane, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteObjectsJSON prints objects as one v1 List, the shape `kubectl get -o json` gives.
func WriteObjectsJSON(out io.Writer, planes []PlaneObjects) error {
	items := []map[string]any{}
	for _, p := range planes {
		for _, obj := range p.Objects {
			items = append(items, obj.Object)
		}
	}
	return WriteJSON(out, map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}
