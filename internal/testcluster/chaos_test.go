package testcluster

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestChaosStagesManifest: each mode has a Stage in chaos-stages.yaml that selects
// its label value and has a weight, without which kwok could pick the fast
// pod-ready stage (weight 0) instead; a Stage that ChaosImage copies has the name
// chaosStage gives and a label expression to replace.
func TestChaosStagesManifest(t *testing.T) {
	data, err := os.ReadFile("../../hack/testcluster/manifests/chaos-stages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byMode := map[string]*unstructured.Unstructured{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parse Stage: %v\n%s", err, doc)
		}
		stage := &unstructured.Unstructured{Object: obj}
		exprs, _, _ := unstructured.NestedSlice(obj, "spec", "selector", "matchExpressions")
		for _, e := range exprs {
			if m, ok := e.(map[string]any); ok && m["key"] == chaosLabelKey {
				for _, v := range m["values"].([]any) {
					if prev, ok := byMode[v.(string)]; ok {
						t.Errorf("Stages %s and %s both select mode %s", prev.GetName(), stage.GetName(), v)
					}
					byMode[v.(string)] = stage
				}
			}
		}
	}
	for _, mode := range []ChaosMode{ChaosCrashLoop, ChaosOOMKilled, ChaosEvicted, ChaosNeverReady, ChaosImagePull} {
		stage, ok := byMode[string(mode)]
		if !ok {
			t.Errorf("no Stage selects %s=%s", ChaosLabel, mode)
			continue
		}
		if w, _, _ := unstructured.NestedFieldNoCopy(stage.Object, "spec", "weight"); w == nil || w.(float64) <= 0 {
			t.Errorf("Stage %s: weight %v, want above pod-ready's 0", stage.GetName(), w)
		}
		name, copied := chaosStage(mode)
		if !copied {
			continue
		}
		if stage.GetName() != name {
			t.Errorf("mode %s: chaosStage gives %s, the manifest has %s", mode, name, stage.GetName())
		}
		if _, err := imageStageSpec(stage, "t-ns", "registry.example/api:bad"); err != nil {
			t.Errorf("Stage %s cannot be copied: %v", stage.GetName(), err)
		}
	}
}

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
	// Tests share the cluster: the copy fails the image in the test's namespace only.
	inNamespace := expr(".metadata.namespace", "In", "t-ns")
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
		{name: "label first", base: stage(expr(chaosLabelKey, "In", "crashloop"), notDeleted, running), want: []any{byImage, notDeleted, running, inNamespace}},
		{name: "label later", base: stage(notDeleted, expr(chaosLabelKey, "In", "oomkilled"), running), want: []any{notDeleted, byImage, running, inNamespace}},
		{name: "no label expression", base: stage(notDeleted, running), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := imageStageSpec(tc.base, "t-ns", "registry.example/api:bad")
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
