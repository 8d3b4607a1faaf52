/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// DataLayoutError refuses a plan that would roll a live stateful workload onto pods
// that expect another layout of its data (AnnotationDataLayout): the new pods would
// not start on the old volumes, one after another, until the workload was down.
type DataLayoutError struct {
	Object       ObjectRef
	Live, Wanted string
}

func (e *DataLayoutError) Error() string {
	live := e.Live
	if live == "" {
		live = "none (created by an earlier kubectl-onto)"
	}
	return fmt.Sprintf("%s: its live data layout is %s, this version renders %s; rolling it over would break its data, so nothing is planned. "+
		"To re-create it empty (its data is lost): kubectl -n %s delete statefulset %s, delete its PersistentVolumeClaims, then apply",
		e.Object, live, e.Wanted, e.Object.Namespace, e.Object.Name)
}

// checkDataLayouts refuses the first desired object whose live object has another
// data layout. An object not live yet, or not listed, has nothing to break.
func checkDataLayouts(objs []*unstructured.Unstructured, live map[string]*unstructured.Unstructured) error {
	for _, obj := range objs {
		wanted, ok := obj.GetAnnotations()[v1alpha1.AnnotationDataLayout]
		if !ok {
			continue
		}
		liveObj := live[RefOf(obj).key()]
		if liveObj == nil {
			continue
		}
		if got := liveObj.GetAnnotations()[v1alpha1.AnnotationDataLayout]; got != wanted {
			return &DataLayoutError{Object: RefOf(obj), Live: got, Wanted: wanted}
		}
	}
	return nil
}
