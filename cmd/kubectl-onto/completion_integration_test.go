/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestCLICompletesFromCluster: the completion of a platform NAME lists the OntoPlatforms
// of the -n namespace, and -n lists the namespaces, from the real API server. The
// platform is only the object (nothing applies it). The test does not install the CRD,
// which belongs to apply: on a cluster no apply has run on yet, it skips.
func TestCLICompletesFromCluster(t *testing.T) {
	c := testcluster.New(t)
	crds := c.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Get(t.Context(), v1alpha1.CRDName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Skip("the OntoPlatform CRD is not installed (apply installs it): nothing to complete")
	} else if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	data, err := os.ReadFile(example("minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &p.Object); err != nil {
		t.Fatal(err)
	}
	p.SetNamespace(ns)
	if _, err := c.Dynamic.Resource(platformGVR()).Namespace(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the platform object: %v", err)
	}
	kc := "--kubeconfig=" + c.Kubeconfig

	tests := []struct {
		name  string
		words []string
		want  []string
	}{
		{name: "status NAME", words: []string{kc, "status", "-n", ns, ""}, want: []string{p.GetName()}},
		{name: "unlock NAME prefix", words: []string{kc, "-n", ns, "unlock", p.GetName()[:3]}, want: []string{p.GetName()}},
		{name: "no match", words: []string{kc, "uninstall", "-n", ns, "zz"}},
		{name: "other namespace", words: []string{kc, "status", "-n", "kube-system", ""}},
		{name: "namespace prefix", words: []string{kc, "status", "-n", ns[:len(ns)-1]}, want: []string{ns}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := complete(t, tc.words...)
			if !slices.Equal(got.values, tc.want) {
				t.Fatalf("choices %q, want %q", got.values, tc.want)
			}
		})
	}
}
