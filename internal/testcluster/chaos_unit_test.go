package testcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestImageStageSpec(t *testing.T) {
	expr := func(key, op string, values ...any) map[string]any {
		m := map[string]any{"key": key, "operator": op}
		if values != nil {
			m["values"] = values
		}
		return m
	}
	notDeleted := expr(".metadata.deletionTimestamp", "DoesNotExist")
	running := expr(".status.phase", "In", "Running")
	byImage := expr(".spec.containers.[].image", "In", "registry.example/api:bad")
	stage := func(exprs ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"selector": map[string]any{"matchExpressions": exprs},
			"weight":   int64(10000),
		}}}
	}
	tests := []struct {
		name    string
		base    *unstructured.Unstructured
		want    []any
		wantErr bool
	}{
		{name: "label first", base: stage(expr(chaosLabelKey, "In", "crashloop"), notDeleted, running), want: []any{byImage, notDeleted, running}},
		{name: "label later", base: stage(notDeleted, expr(chaosLabelKey, "In", "oomkilled"), running), want: []any{notDeleted, byImage, running}},
		{name: "no label expression", base: stage(notDeleted, running), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := imageStageSpec(tc.base, "registry.example/api:bad")
			if (err != nil) != tc.wantErr {
				t.Fatalf("imageStageSpec: %v, want error %t", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			got, _, _ := unstructured.NestedSlice(spec, "selector", "matchExpressions")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			if spec["weight"] != int64(10000) {
				t.Errorf("weight %v not kept", spec["weight"])
			}
			base, _, _ := unstructured.NestedSlice(tc.base.Object, "spec", "selector", "matchExpressions")
			if base[0].(map[string]any)["key"] == ".spec.containers.[].image" || base[1].(map[string]any)["key"] == ".spec.containers.[].image" {
				t.Errorf("the base Stage was changed: %v", base)
			}
		})
	}
}
