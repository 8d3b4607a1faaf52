/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestSpecPatches covers the patches stored in spec.patches: applied by Render on its
// own, before the one-off ones, and named by their field path when they fail.
func TestSpecPatches(t *testing.T) {
	minReady := func(n int) string {
		return `[{"op": "replace", "path": "/spec/minReadySeconds", "value": ` + strconv.Itoa(n) + `}]`
	}
	gateway := &v1alpha1.PatchTarget{Group: "apps", Kind: "Deployment", Name: "gateway"}
	tests := []struct {
		name    string
		stored  []v1alpha1.Patch
		oneOff  []Patch
		want    int64 // minReadySeconds of the gateway Deployment
		wantErr string
	}{
		{
			name:   "stored patch applies without options",
			stored: []v1alpha1.Patch{{Patch: minReady(3), Target: gateway}},
			want:   3,
		},
		{
			name:   "strategic merge without target",
			stored: []v1alpha1.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\nspec:\n  minReadySeconds: 4\n"}},
			want:   4,
		},
		{
			name:   "a one-off patch applies after the stored ones",
			stored: []v1alpha1.Patch{{Patch: minReady(3), Target: gateway}},
			oneOff: []Patch{{Patch: minReady(5), Target: &PatchTarget{Kind: "Deployment", Name: "gateway"}}},
			want:   5,
		},
		{
			name: "target matching nothing",
			stored: []v1alpha1.Patch{
				{Patch: minReady(3), Target: gateway},
				{Patch: minReady(3), Target: &v1alpha1.PatchTarget{Kind: "Deployment", Name: "gatewy"}},
			},
			wantErr: `spec.patches[1]: target {kind="Deployment", name="gatewy"} matches no object the platform renders`,
		},
		{
			name:    "selector matching nothing",
			stored:  []v1alpha1.Patch{{Patch: minReady(3), Target: &v1alpha1.PatchTarget{LabelSelector: "app.kubernetes.io/name=nope"}}},
			wantErr: `spec.patches[0]: target {labelSelector="app.kubernetes.io/name=nope"} matches no object`,
		},
		{
			name:    "strategic merge naming a missing object",
			stored:  []v1alpha1.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nope\n"}},
			wantErr: "spec.patches[0]: the platform renders no Deployment nope",
		},
		{
			name:    "json6902 without target",
			stored:  []v1alpha1.Patch{{Patch: minReady(3)}},
			wantErr: "spec.patches[0]: a patch without a target must be a strategic-merge patch",
		},
		{
			// kustomize does not say which patch of a build failed; the render does.
			name: "an operation that cannot apply is blamed on its patch",
			stored: []v1alpha1.Patch{
				{Patch: minReady(1), Target: gateway},
				{Patch: minReady(2), Target: gateway},
				{Patch: `[{"op": "remove", "path": "/spec/no/such/field"}]`, Target: gateway},
				{Patch: minReady(4), Target: gateway},
			},
			wantErr: "spec.patches[2]: ",
		},
		{
			name:    "a one-off patch is named as such",
			oneOff:  []Patch{{Patch: minReady(3), Target: &PatchTarget{Kind: "Deployment", Name: "nope"}}},
			wantErr: `user patch 0: target {kind="Deployment", name="nope"} matches no object`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			p.Spec.Patches = tc.stored
			before := p.DeepCopy()
			planes, err := Render(p, Options{Release: rel, Patches: tc.oneOff})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, p); diff != "" {
				t.Errorf("Render changed the platform (-before +after):\n%s", diff)
			}
			d := find(Objects(planes), "Deployment", "gateway")
			if d == nil {
				t.Fatal("no gateway Deployment")
			}
			if got := d.Object["spec"].(map[string]any)["minReadySeconds"]; got != tc.want {
				t.Errorf("minReadySeconds = %v (%T), want %d", got, got, tc.want)
			}
		})
	}
}
