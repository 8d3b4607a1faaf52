/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCRDTransitionRules: the generated CRD carries the transition rules (rules on
// oldSelf) that refuse changes breaking a live cluster, each on the schema of its
// field or naming it by fieldPath, so the API server's error names the field.
// pkg/spec's TestTransitionMatchesCRD checks what they decide.
func TestCRDTransitionRules(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "crd", "onto.paas_ontoplatforms.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	infra := spec.Properties["infrastructure"]
	tests := []struct {
		name      string
		schema    apiextensionsv1.JSONSchemaProps
		fieldPath string
		message   string
	}{
		{"kafka controller quorum", infra.Properties["kafka"], ".replicas", "kafka.replicas cannot cross 3"},
		{"minio replicas", infra.Properties["minio"], ".replicas", "minio.replicas cannot change"},
		{"minio storage", infra.Properties["minio"], ".storage", "minio.storage cannot change"},
		{"redis mode", infra.Properties["redis"].Properties["mode"], "", "redis.mode cannot change"},
		{"storage class", spec.Properties["global"].Properties["storageClass"], "", "storageClass cannot change"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range tc.schema.XValidations {
				if strings.Contains(r.Rule, "oldSelf") && r.FieldPath == tc.fieldPath && strings.HasPrefix(r.Message, tc.message) {
					return
				}
			}
			t.Errorf("no transition rule with fieldPath %q and message %q among %+v", tc.fieldPath, tc.message, tc.schema.XValidations)
		})
	}
}
