/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Regular expressions of the generated schema, by what a user should be told instead
// of the expression. The rules stay the schema's; only the wording changes.
const (
	quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
	semverPattern   = `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	dnsLabelPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	hostPattern     = `^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
)

// friendlyDetail rewords an OpenAPI validation message. kube-openapi repeats the field
// path ("spec.x in body should ...") which the issue already shows, and a pattern
// failure prints a regular expression where a user needs an example.
func friendlyDetail(e *field.Error) string {
	d := strings.TrimPrefix(e.Detail, e.Field+" in body ")
	switch {
	case strings.HasSuffix(d, "should match '"+quantityPattern+"'"):
		return `must be a quantity such as "500m", "2" or "4Gi"`
	case strings.HasSuffix(d, "should match '"+semverPattern+"'"):
		return `must be a semantic version such as "1.5.0"`
	case strings.HasSuffix(d, "should match '"+dnsLabelPattern+"'"):
		return `must be a DNS label such as "onto-system": lowercase letters, digits and '-'`
	case strings.HasSuffix(d, "should match '"+hostPattern+"'"):
		return `must be a lowercase DNS name such as "platform.example.com", optionally starting with "*."`
	}
	return d
}

// withoutConsequences drops the CEL errors at or above a field the schema already
// rejected: a rule over an invalid value ("requests must not exceed limits" over a
// quantity that does not parse) only fails because of it, and its message would be
// noise next to the real one.
func withoutConsequences(celErrs, schemaErrs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, ce := range celErrs {
		consequence := false
		for _, se := range schemaErrs {
			if se.Field == ce.Field || strings.HasPrefix(se.Field, ce.Field+".") || strings.HasPrefix(se.Field, ce.Field+"[") {
				consequence = true
				break
			}
		}
		if !consequence {
			out = append(out, ce)
		}
	}
	return out
}

// jsonTypeName names the JSON type of a decoded value for messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}
