/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// Patch is a kustomize patch of the rendered objects: a strategic-merge patch (a
// partial object naming its apiVersion, kind and metadata.name) or JSON 6902
// operations (a list, which needs a target). The field names are kustomize's.
type Patch struct {
	// Patch is the patch document, YAML or JSON, at most 64 KiB (so that even many
	// patches keep the stored OntoPlatform under the API server's size limit).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	// +required
	Patch string `json:"patch"`

	// Target selects the objects to patch. A strategic-merge patch without one patches
	// the object it names; JSON 6902 operations require one.
	// +optional
	Target *PatchTarget `json:"target,omitempty"`
}

// PatchTarget selects objects as a kustomize patch target does; every field set must
// match.
type PatchTarget struct {
	// Group of the objects' API version; empty is the core group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`
	// Version of the objects' API version.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Version string `json:"version,omitempty"`
	// Kind of the objects.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name of the objects, a regular expression matched against the whole name.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the objects, a regular expression.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector selects objects by label, as in `kubectl get -l`.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// AnnotationSelector selects objects by annotation, with the syntax of a label
	// selector.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}
