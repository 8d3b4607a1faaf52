/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"fmt"
	"io/fs"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/manifests"
)

// crdSchema is what the API server derives from the OntoPlatform CRD to decode,
// default and validate a custom resource: the structural schema (pruning, defaulting,
// CEL), the OpenAPI validator and the compiled CEL rules.
type crdSchema struct {
	structural *structuralschema.Structural
	openAPI    apiextensionsvalidation.SchemaValidator
	// cel is nil when the schema has no x-kubernetes-validations.
	cel *cel.Validator
}

// loadCRDSchema reads the generated CRD compiled into the binary and builds the
// validators of its v1alpha1 version, converting the v1 schema to the internal
// apiextensions type first, as the API server does.
func loadCRDSchema(fsys fs.FS, path string) (*crdSchema, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("read crd: %w", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, fmt.Errorf("decode crd %s: %w", path, err)
	}
	var v1Schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == v1alpha1.GroupVersion.Version && v.Schema != nil {
			v1Schema = v.Schema.OpenAPIV3Schema
		}
	}
	if v1Schema == nil {
		return nil, fmt.Errorf("crd %s has no schema for version %s", path, v1alpha1.GroupVersion.Version)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1Schema, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert crd schema: %w", err)
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("crd schema is not structural: %w", err)
	}
	openAPI, _, err := apiextensionsvalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, fmt.Errorf("crd openapi schema: %w", err)
	}
	return &crdSchema{
		structural: structural,
		openAPI:    openAPI,
		cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}, nil
}

// defaultCRDSchema is the schema of the CRD shipped in the binary.
func defaultCRDSchema() (*crdSchema, error) {
	return loadCRDSchema(manifests.FS, manifests.CRDPath)
}
