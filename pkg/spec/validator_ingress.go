/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// checkIngressAnnotations requires the keys of spec.gateway.ingress.annotations to be
// qualified names, as the API server requires of any annotation. A CEL rule cannot say
// it within the API server's cost budget (the keys' length is unbounded in the
// schema), and without this check the error would come from the rendered Ingress,
// mid-apply, far from the field.
func checkIngressAnnotations(p *v1alpha1.OntoPlatform) field.ErrorList {
	in := p.Spec.Gateway.Ingress
	if in == nil {
		return nil
	}
	path := field.NewPath("spec", "gateway", "ingress", "annotations")
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(in.Annotations)) {
		// Lower case first, as the API server's own check of annotations does.
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Key(k), k, "annotation keys are qualified names ([prefix/]name): "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}
