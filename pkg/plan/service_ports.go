/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// servicePort is the key of a Service's spec.ports, a list server-side apply merges
// by port and protocol.
type servicePort struct {
	Port     int64  `json:"port"`
	Protocol string `json:"protocol"`
}

func (k servicePort) String() string {
	return fmt.Sprintf("spec.ports[port=%d,protocol=%s]", k.Port, k.Protocol)
}

// foreignServicePorts lists the ports of live, a Service, that obj does not render,
// with the field manager that owns each. Server-side apply merges spec.ports by port
// and protocol, so a port someone changed (kubectl patch of 8080 to 8088) stays beside
// the rendered one the apply adds back, under the same name: the API server refuses
// the result (duplicate port name), and no apply of the rendered object can repair it.
func foreignServicePorts(obj, live *unstructured.Unstructured) map[servicePort]string {
	if obj.GetKind() != "Service" || obj.GroupVersionKind().Group != "" {
		return nil
	}
	rendered := map[servicePort]bool{}
	for _, k := range servicePorts(obj) {
		rendered[k] = true
	}
	out := map[servicePort]string{}
	for _, k := range servicePorts(live) {
		if !rendered[k] {
			out[k] = portManager(live, k)
		}
	}
	return out
}

func servicePorts(obj *unstructured.Unstructured) []servicePort {
	ports, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
	var out []servicePort
	for _, p := range ports {
		m, _ := p.(map[string]any)
		k := servicePort{Protocol: "TCP"}
		switch v := m["port"].(type) {
		case int64:
			k.Port = v
		case float64:
			k.Port = int64(v)
		}
		if s, ok := m["protocol"].(string); ok && s != "" {
			k.Protocol = s
		}
		out = append(out, k)
	}
	return out
}

// portManager is the field manager that owns port k of live, from its managedFields
// ("unknown" when none says so).
func portManager(live *unstructured.Unstructured, k servicePort) string {
	var managers []string
	for _, mf := range live.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Spec struct {
				Ports map[string]json.RawMessage `json:"f:ports"`
			} `json:"f:spec"`
		}
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		for key := range fields.Spec.Ports {
			var got servicePort
			if raw, ok := strings.CutPrefix(key, "k:"); ok && json.Unmarshal([]byte(raw), &got) == nil && got == k {
				managers = append(managers, fmt.Sprintf("%s (%s)", mf.Manager, mf.Operation))
			}
		}
	}
	if len(managers) == 0 {
		return "unknown"
	}
	return strings.Join(managers, ", ")
}

// planPortsReplace plans a Service whose live ports hold ones the platform does not
// render (foreign, each with its manager): apply first sets spec.ports to the rendered
// ports with a merge patch (it replaces the list whole), then applies as usual. The
// plan shows the result of that merge patch, dry-run, and names each foreign port as
// a conflict with its manager: without --force-conflicts the CLI refuses, naming them;
// the watch, which repairs drift, replaces them. applyErr is the refused apply.
func (pl *Planner) planPortsReplace(ctx context.Context, ri dynamic.ResourceInterface, obj, live *unstructured.Unstructured, conflicts []Conflict, foreign map[servicePort]string, applyErr error) (Change, error) {
	ports, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": live.GetResourceVersion()},
		"spec":     map[string]any{"ports": ports},
	})
	if err != nil {
		return Change{}, err
	}
	merged, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: pl.fieldManager(), DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return Change{}, fmt.Errorf("%w; setting spec.ports to the rendered ports is refused too: %v", applyErr, err)
	}
	for k, manager := range foreign {
		conflicts = append(conflicts, Conflict{Kind: ConflictFieldManager, Field: k.String(), Manager: manager,
			Message: "a port the platform does not render: server-side apply cannot remove another manager's list item, so the rendered ports replace the list"})
	}
	slices.SortFunc(conflicts, func(a, b Conflict) int { return strings.Compare(a.Field, b.Field) })
	return Change{Action: ActionUpdate, Object: RefOf(obj), ResourceVersion: live.GetResourceVersion(), Conflicts: conflicts,
		Fields: Diff(live, merged), Desired: obj, ReplaceLists: []string{"spec.ports"}}, nil
}
