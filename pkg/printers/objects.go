/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// PlaneObjects is the rendered objects of one plane, as printed by `render`.
type PlaneObjects struct {
	Plane   string
	Objects []*unstructured.Unstructured
	// LeftOut are the objects left out of Objects (plan.StandaloneObjects); the YAML
	// stream says so in their place, as a comment.
	LeftOut []plan.LeftOut
}

// WriteObjectsYAML prints objects as a multi-document YAML stream that kubectl, kapp
// and GitOps tools read, with a comment naming each object's plane. Each object left
// out is a document of comments only, in its place, which those tools skip.
func WriteObjectsYAML(out io.Writer, planes []PlaneObjects) error {
	for _, p := range planes {
		left := p.LeftOut
		writeLeftOut := func(at int) error {
			for ; len(left) > 0 && left[0].At <= at; left = left[1:] {
				if _, err := fmt.Fprintf(out, "---\n# plane: %s\n# %s\n", p.Plane, left[0]); err != nil {
					return err
				}
			}
			return nil
		}
		for i, obj := range p.Objects {
			if err := writeLeftOut(i); err != nil {
				return err
			}
			data, err := marshalYAML(obj.Object)
			if err != nil {
				return fmt.Errorf("marshal %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
			if _, err := fmt.Fprintf(out, "---\n# plane: %s\n%s", p.Plane, data); err != nil {
				return err
			}
		}
		if err := writeLeftOut(len(p.Objects)); err != nil {
			return err
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

// WriteObjectNames prints kind.group/name per object, as kubectl's -o name.
func WriteObjectNames(out io.Writer, planes []PlaneObjects) error {
	for _, p := range planes {
		for _, obj := range p.Objects {
			kind := strings.ToLower(obj.GetKind())
			if g := obj.GroupVersionKind().Group; g != "" {
				kind += "." + g
			}
			if _, err := fmt.Fprintf(out, "%s/%s\n", kind, obj.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteDryRunObjects lists objects under their plane, kubectl style, for a client dry
// run: "deployment.apps/gateway (dry run)".
func WriteDryRunObjects(out io.Writer, t *Terminal, planes []PlaneObjects) error {
	var b strings.Builder
	last := ""
	for _, p := range planes {
		if p.Plane != last {
			b.WriteString(t.Bold.Render("▸ "+p.Plane) + "\n")
			last = p.Plane
		}
		var names strings.Builder
		if err := WriteObjectNames(&names, []PlaneObjects{p}); err != nil {
			return err
		}
		for _, n := range strings.Split(strings.TrimSpace(names.String()), "\n") {
			if n != "" {
				fmt.Fprintf(&b, "    %s (dry run)\n", n)
			}
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}
