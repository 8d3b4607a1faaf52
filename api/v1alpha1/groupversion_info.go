/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package v1alpha1 holds the OntoPlatform API, group onto.paas, version v1alpha1.
// The CRD in manifests/crd is generated from these types by controller-gen
// (`make generate`); offline validation in pkg/spec runs the same generated schema.
// +kubebuilder:object:generate=true
// +groupName=onto.paas
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the OntoPlatform API.
	GroupVersion = schema.GroupVersion{Group: "onto.paas", Version: "v1alpha1"}

	// schemeBuilder registers the API types; use AddToScheme on a local scheme.
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API types to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Kind is the kind of the platform resource.
const Kind = "OntoPlatform"

// GroupVersionKind of OntoPlatform.
var GroupVersionKind = GroupVersion.WithKind(Kind)

// CRDName is the name of the CustomResourceDefinition of OntoPlatform.
const CRDName = "ontoplatforms.onto.paas"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &OntoPlatform{}, &OntoPlatformList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
