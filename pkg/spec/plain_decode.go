/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// DecodeFile decodes data, one YAML (or JSON) document that is not a Kubernetes
// object (the fleet file of kubectl onto apply --fleet), into out, a pointer to a
// struct with json tags, the way platform files are read: sigs.k8s.io/yaml's meaning
// of scalars, strict (an unknown or repeated field is an error). check, when not nil,
// validates the decoded value; it runs only when decoding succeeded. Every problem of
// both is returned at once as an *Error whose issues carry the line of their field,
// found in the same line index platform files use; filename names the input.
func DecodeFile(filename string, data []byte, out any, check func() field.ErrorList) error {
	docs := splitDocuments(data)
	switch len(docs) {
	case 0:
		return &Error{File: filename, Issues: []Issue{{Type: field.ErrorTypeRequired.String(), Message: "the file is empty"}}}
	case 1:
	default:
		return &Error{File: filename, Issues: []Issue{{Line: docs[1].firstLine, Type: field.ErrorTypeInvalid.String(),
			Message: fmt.Sprintf("the file holds %d YAML documents; it must hold one", len(docs))}}}
	}
	d := docs[0]
	offset := d.firstLine - 1
	c := &collector{lines: lineIndex{offset: offset}}
	var root yaml.Node
	if err := yaml.Unmarshal(d.data, &root); err != nil {
		c.addAt(syntaxError(err, d))
		return &Error{File: filename, Issues: c.issues}
	}
	c.lines.root = &root
	duplicateKeys(&root, nil, offset, c.addAt)
	js, err := sigsyaml.YAMLToJSON(d.data)
	if err != nil {
		c.addAt(syntaxError(err, d))
		return &Error{File: filename, Issues: sortIssues(c.issues)}
	}
	if strict, err := sigsjson.UnmarshalStrict(js, out, sigsjson.DisallowUnknownFields); err != nil {
		c.add(typeError(err))
	} else {
		for _, e := range strict {
			var fe sigsjson.FieldError
			if errors.As(e, &fe) && strings.HasPrefix(e.Error(), "unknown field") {
				// Worded as a platform file's unknown field (isUnknownField).
				c.add(&field.Error{Type: field.ErrorTypeForbidden, Field: fe.FieldPath(), Detail: fmt.Sprintf("unknown field %q", lastName(fe.FieldPath()))})
				continue
			}
			// Repeated keys were reported by duplicateKeys, at the repeated key's line.
		}
	}
	if len(c.issues) == 0 && check != nil {
		c.add(check()...)
	}
	if len(c.issues) > 0 {
		return &Error{File: filename, Issues: sortIssues(c.issues)}
	}
	return nil
}

// lastName is the last field name of a path such as "waves[0].clusters[1].contxt".
func lastName(path string) string {
	segs := parsePath(path)
	for i := len(segs) - 1; i >= 0; i-- {
		if !segs[i].bracket {
			return segs[i].name
		}
	}
	return path
}

// jsonTypeError is encoding/json's message for a value of the wrong type; the fork in
// sigs.k8s.io/json does not export its error type.
var jsonTypeError = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field \w+\.(\S+) of type (\S+)`)

// typeError places a decoding error at its field when it names one (a string where a
// number goes); the field path has no list indexes, so its line is the nearest one.
func typeError(err error) *field.Error {
	if m := jsonTypeError.FindStringSubmatch(err.Error()); m != nil {
		return field.Invalid(field.NewPath(m[2]), field.OmitValueType{}, fmt.Sprintf("must be of type %s, not %s", m[3], m[1]))
	}
	return field.Invalid(nil, field.OmitValueType{}, "invalid document: "+strings.TrimPrefix(err.Error(), "json: "))
}
