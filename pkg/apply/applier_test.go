/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

func TestWriteWaves(t *testing.T) {
	ch := func(kind string) plan.Change {
		return plan.Change{Object: plan.ObjectRef{Kind: kind, Name: strings.ToLower(kind)}}
	}
	kinds := func(w []plan.Change) []string {
		var out []string
		for _, c := range w {
			out = append(out, c.Object.Kind)
		}
		return out
	}
	tests := []struct {
		name   string
		writes []plan.Change
		want   [][]string
	}{
		{name: "none", want: nil},
		{name: "config only", writes: []plan.Change{ch("ConfigMap")}, want: [][]string{{"ConfigMap"}}},
		{
			name:   "a plane",
			writes: []plan.Change{ch("HorizontalPodAutoscaler"), ch("Deployment"), ch("ConfigMap"), ch("StatefulSet"), ch("ServiceAccount"), ch("PodDisruptionBudget"), ch("Service")},
			want:   [][]string{{"ConfigMap", "ServiceAccount", "Service"}, {"Deployment", "StatefulSet"}, {"HorizontalPodAutoscaler", "PodDisruptionBudget"}},
		},
		{name: "workloads only", writes: []plan.Change{ch("Deployment")}, want: [][]string{{"Deployment"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := writeWaves(tc.writes)
			if len(got) != len(tc.want) {
				t.Fatalf("%d waves, want %d: %v", len(got), len(tc.want), got)
			}
			for i := range got {
				if g := strings.Join(kinds(got[i]), ","); g != strings.Join(tc.want[i], ",") {
					t.Errorf("wave %d = %s, want %s", i, g, strings.Join(tc.want[i], ","))
				}
			}
		})
	}
}

func TestIsFieldManagerConflict(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	managerConflict := apierrors.NewApplyConflict([]metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-set"`, Field: ".spec.replicas"}}, "Apply failed with 1 conflict")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil},
		{name: "field manager conflict", err: managerConflict, want: true},
		{name: "stale resourceVersion", err: apierrors.NewConflict(gr, "gateway", errors.New("the object has been modified"))},
		{name: "not found", err: apierrors.NewNotFound(gr, "gateway")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isFieldManagerConflict(tc.err); got != tc.want {
				t.Fatalf("isFieldManagerConflict(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestCheckVersion(t *testing.T) {
	r16 := &release.Release{Version: "1.6.0", UpgradeFrom: ">= 1.5.0, < 1.6.0"}
	tests := []struct {
		name      string
		installed string
		target    string
		rel       *release.Release
		force     bool
		wantErr   string
	}{
		{name: "first install", installed: "", target: "1.6.0", rel: r16},
		{name: "same version", installed: "1.6.0", target: "1.6.0", rel: r16},
		{name: "on the path", installed: "1.5.3", target: "1.6.0", rel: r16},
		{name: "downgrade", installed: "1.7.0", target: "1.6.0", rel: r16, wantErr: "downgrades are refused"},
		{name: "downgrade forced", installed: "1.7.0", target: "1.6.0", rel: r16, force: true},
		{name: "skipped version", installed: "1.4.0", target: "1.6.0", rel: r16, wantErr: "not supported"},
		{name: "no release given", installed: "1.7.0", target: "1.6.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Plan{Platform: plan.ObjectRef{Namespace: "ns", Name: "onto"}, Version: tc.target, InstalledVersion: tc.installed}
			err := checkVersion(p, Options{Release: tc.rel, ForceVersion: tc.force})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("checkVersion = %v, want nil", err)
				}
				return
			}
			var ve *VersionError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.installed) || !strings.Contains(err.Error(), "--force-version") {
				t.Fatalf("checkVersion = %v, want a VersionError saying %q, naming %s and --force-version", err, tc.wantErr, tc.installed)
			}
		})
	}
}
