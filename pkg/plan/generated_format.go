/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// GeneratedFormats are the formats of a generated Secret's keys that are not random
// passwords, by key (annotation onto.paas/generate-format, "key=format,..."): a key it
// does not name is a password.
func GeneratedFormats(obj *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(obj.GetAnnotations()[v1alpha1.AnnotationGenerateFormat], ",") {
		key, format, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && key != "" {
			out[strings.TrimSpace(key)] = strings.TrimSpace(format)
		}
	}
	return out
}
