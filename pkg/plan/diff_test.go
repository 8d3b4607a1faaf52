/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const liveDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
  namespace: onto-system
  resourceVersion: "41"
  generation: 3
  uid: 1234
  creationTimestamp: "2026-11-30T00:00:00Z"
  managedFields: [{manager: kubectl-onto}]
  annotations: {deployment.kubernetes.io/revision: "3"}
  labels: {app.kubernetes.io/version: 1.5.0}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: gateway
        image: r/gateway:1.5.0
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
      - name: sidecar
        image: r/sidecar:1
status: {readyReplicas: 3}
`

// TestDiff compares a live Deployment with dry-run results and checks the changed paths,
// by golden file, so the plan's wording of a change is reviewed as output.
func TestDiff(t *testing.T) {
	tests := []struct {
		name   string
		merged string
	}{
		{name: "unchanged-but-server-fields", merged: strings.NewReplacer(`resourceVersion: "41"`, `resourceVersion: "42"`, "generation: 3", "generation: 4", "readyReplicas: 3", "readyReplicas: 1", `revision: "3"`, `revision: "4"`).Replace(liveDeployment)},
		{name: "image-and-replicas", merged: strings.NewReplacer("r/gateway:1.5.0", "r/gateway:1.6.0", "replicas: 3", "replicas: 4", "app.kubernetes.io/version: 1.5.0", "app.kubernetes.io/version: 1.6.0").Replace(liveDeployment)},
		{name: "env-added-and-container-removed", merged: strings.NewReplacer(`{name: B, value: "2"}]`, `{name: B, value: "2"}, {name: C, value: "3"}]`, "      - name: sidecar\n        image: r/sidecar:1\n", "").Replace(liveDeployment)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.MarshalIndent(Diff(obj(t, liveDeployment), obj(t, tc.merged)), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, append(got, '\n'), filepath.Join("testdata", "TestDiff", tc.name+".golden"))
		})
	}
}

func TestDiffMasksSecrets(t *testing.T) {
	live := obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: b2xk}\n")
	merged := obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: bmV3, user: YQ==}\nstringData: {token: plain}\n")
	fields := Diff(live, merged)
	if len(fields) != 3 {
		t.Fatalf("fields = %+v, want password, user and token", fields)
	}
	for _, f := range fields {
		for _, v := range []any{f.Old, f.New} {
			if v != nil && v != Masked {
				t.Fatalf("%s shows a value %v, want %s", f.Path, v, Masked)
			}
		}
	}
}

func TestConflictsOf(t *testing.T) {
	err := apierrors.NewApplyConflict([]metav1.StatusCause{
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-scale" using apps/v1`, Field: ".spec.replicas"},
	}, "Apply failed with 1 conflict")
	got := conflictsOf(err)
	if len(got) != 1 || got[0].Manager != "kubectl-scale" || got[0].Field != ".spec.replicas" {
		t.Fatalf("conflictsOf = %+v", got)
	}
	if got := conflictsOf(errors.New("boom")); len(got) != 1 || got[0].Message != "boom" {
		t.Fatalf("conflictsOf(plain error) = %+v", got)
	}
}

// TestVerify: a saved plan runs only while a fresh plan is the same, change for change.
func TestVerify(t *testing.T) {
	ref := ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "gateway"}
	desired := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gateway, namespace: ns}\nspec: {replicas: 2}\n")
	mk := func(rv string, d *unstructured.Unstructured) *Plan {
		return &Plan{Platform: ObjectRef{Kind: "OntoPlatform", Name: "p"}, Planes: []PlanePlan{{Name: "gateway", Changes: []Change{
			{Action: ActionUpdate, Object: ref, ResourceVersion: rv, Desired: d},
		}}}}
	}
	saved := mk("7", desired)
	if err := Verify(saved, mk("7", desired.DeepCopy())); err != nil {
		t.Fatalf("identical plans: %v", err)
	}
	other := desired.DeepCopy()
	_ = unstructured.SetNestedField(other.Object, int64(3), "spec", "replicas")
	for name, fresh := range map[string]*Plan{
		"resourceVersion": mk("8", desired),
		"desired":         mk("7", other),
		"platform":        {Platform: ObjectRef{Kind: "OntoPlatform", Name: "q"}},
	} {
		var stale *StalePlanError
		if err := Verify(saved, fresh); !errors.As(err, &stale) {
			t.Errorf("%s changed: Verify = %v, want a StalePlanError", name, err)
		}
	}
}

func TestSummaryAndHasChanges(t *testing.T) {
	p := &Plan{Planes: []PlanePlan{{Changes: []Change{{Action: ActionUnchanged}, {Action: ActionUpdate, Conflicts: []Conflict{{}}}}}}}
	p.summarize()
	if !p.HasChanges() || p.Summary.Update != 1 || p.Summary.Unchanged != 1 || p.Summary.Conflicts != 1 {
		t.Fatalf("summary = %+v", p.Summary)
	}
	p = &Plan{Planes: []PlanePlan{{Changes: []Change{{Action: ActionUnchanged}}}}}
	p.summarize()
	if p.HasChanges() {
		t.Fatal("a plan of unchanged objects has changes")
	}
}
