/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

func statefulSet(name string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("StatefulSet")
	u.SetNamespace("onto")
	u.SetName(name)
	u.SetAnnotations(annotations)
	return u
}

// TestCheckDataLayouts: a live workload is refused when its data layout differs from
// the rendered one, a missing annotation (an earlier build) included; an unchanged
// layout, an object not live yet, and an object without a layout pass.
func TestCheckDataLayouts(t *testing.T) {
	layout := func(v string) map[string]string { return map[string]string{v1alpha1.AnnotationDataLayout: v} }
	desired := []*unstructured.Unstructured{statefulSet("postgres", nil), statefulSet("kafka", layout("v2"))}
	liveOf := func(objs ...*unstructured.Unstructured) map[string]*unstructured.Unstructured {
		m := map[string]*unstructured.Unstructured{}
		for _, o := range objs {
			m[RefOf(o).key()] = o
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		live    map[string]*unstructured.Unstructured
		refused string
	}{
		{"nothing live", liveOf(), ""},
		{"same layout", liveOf(statefulSet("postgres", nil), statefulSet("kafka", layout("v2"))), ""},
		{"no layout live", liveOf(statefulSet("kafka", nil)), "none (created by an earlier kubectl-onto)"},
		{"other layout live", liveOf(statefulSet("kafka", layout("v1"))), "its live data layout is v1, this version renders v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDataLayouts(desired, tc.live)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var layoutErr *DataLayoutError
			if !errors.As(err, &layoutErr) || layoutErr.Object.Name != "kafka" {
				t.Fatalf("err = %v, want a DataLayoutError of StatefulSet kafka", err)
			}
			for _, want := range []string{tc.refused, "StatefulSet", "kubectl -n onto delete statefulset kafka"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}
