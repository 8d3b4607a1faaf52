/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/manifests"
)

// TestCRDAcceptedByAPIServer runs the API server's own validation of a
// CustomResourceDefinition on the generated CRD: structural schema, defaults that
// satisfy the schema, CEL rules that compile and fit the cost budget. A rule the
// server would refuse fails here instead of at `kubectl onto apply`.
func TestCRDAcceptedByAPIServer(t *testing.T) {
	data, err := manifests.FS.ReadFile(manifests.CRDPath)
	if err != nil {
		t.Fatal(err)
	}
	var v1crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &v1crd); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensions.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// The server defaults the v1 object before converting it (conversion strategy,
	// preserveUnknownFields and so on).
	scheme.Default(&v1crd)
	var crd apiextensions.CustomResourceDefinition
	if err := scheme.Convert(&v1crd, &crd, nil); err != nil {
		t.Fatal(err)
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(t.Context(), &crd); len(errs) > 0 {
		t.Fatalf("the API server would reject the CRD:\n%v", errs.ToAggregate())
	}
}

func TestLoadCRDSchemaErrors(t *testing.T) {
	if _, err := loadCRDSchema(manifests.FS, "crd/missing.yaml"); err == nil {
		t.Error("a missing CRD file was accepted")
	}
}
