/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// TestCLICompletesFromCluster: the completion of a platform NAME lists the OntoPlatforms
// of the -n namespace, and -n lists the namespaces, from the real API server. The
// platform is only the object (nothing applies it); the CRD is installed as apply
// installs it, so the test runs the same on a cluster no apply has run on yet.
func TestCLICompletesFromCluster(t *testing.T) {
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ontotest.InstallCRD(t, clients)
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
