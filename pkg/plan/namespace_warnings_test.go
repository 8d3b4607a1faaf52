/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamespaceWarnings(t *testing.T) {
	ns := ObjectRef{Version: "v1", Kind: "Namespace", Name: "onto-system"}
	enforce := "metadata.labels[pod-security.kubernetes.io/enforce]"
	tests := []struct {
		name   string
		change Change
		want   []string
	}{
		{
			name: "an existing namespace gains the labels",
			change: Change{Action: ActionUpdate, Object: ns, Fields: []FieldChange{
				{Path: enforce, New: "restricted"},
				{Path: "metadata.labels[pod-security.kubernetes.io/enforce-version]", New: "v1.37"},
				{Path: "metadata.labels[app.kubernetes.io/version]", Old: "1.5.0", New: "1.6.0"},
			}},
			want: []string{"namespace onto-system exists and its Pod Security labels change (enforce: (none) → restricted, enforce-version: (none) → v1.37): " +
				"new pods of every workload in it, not only this platform's, are admitted by the new labels; spec.tenancy.podSecurity sets them (enforce, warn or none)"},
		},
		{
			name: "enforce to warn drops the enforce label",
			change: Change{Action: ActionUpdate, Object: ns, Fields: []FieldChange{
				{Path: enforce, Old: "restricted"},
			}},
			want: []string{"namespace onto-system exists and its Pod Security labels change (enforce: restricted → (none)): " +
				"new pods of every workload in it, not only this platform's, are admitted by the new labels; spec.tenancy.podSecurity sets them (enforce, warn or none)"},
		},
		{
			name: "a namespace without labels gets the whole map",
			change: Change{Action: ActionUpdate, Object: ns, Fields: []FieldChange{
				{Path: "metadata.labels", New: map[string]any{"pod-security.kubernetes.io/warn": "restricted", "app.kubernetes.io/name": "onto-platform"}},
			}},
			want: []string{"namespace onto-system exists and its Pod Security labels change (warn: (none) → restricted): " +
				"new pods of every workload in it, not only this platform's, are admitted by the new labels; spec.tenancy.podSecurity sets them (enforce, warn or none)"},
		},
		{
			name:   "a namespace the plan creates has no pods to judge",
			change: Change{Action: ActionCreate, Object: ns},
		},
		{
			name: "other labels of the namespace",
			change: Change{Action: ActionUpdate, Object: ns, Fields: []FieldChange{
				{Path: "metadata.labels[app.kubernetes.io/version]", Old: "1.5.0", New: "1.6.0"},
			}},
		},
		{
			name: "the same label on another kind",
			change: Change{Action: ActionUpdate, Object: ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Name: "gateway"}, Fields: []FieldChange{
				{Path: enforce, New: "restricted"},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Planes: []PlanePlan{{Name: "platform"}, {Name: "tenancy", Changes: []Change{tc.change}}}}
			if diff := cmp.Diff(tc.want, namespaceWarnings(p)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
