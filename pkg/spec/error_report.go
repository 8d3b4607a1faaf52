/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error is returned by Load and Validate for invalid input. It is data, not a printout:
// the CLI renders it as text (Error) or marshals it to JSON, and the JSON field names
// are part of the command's interface.
type Error struct {
	// File is the name the input was loaded under; empty for an in-memory object.
	File string `json:"file,omitempty"`
	// Issues are every problem found, sorted by line, then field.
	Issues []Issue `json:"issues"`
	// Incomplete is set when some CEL rules were not evaluated because a value has the
	// wrong type; fixing the issues may reveal more.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Issue is one problem with the input, at a field.
type Issue struct {
	// Field is the path of the field, as the API server names it, such as
	// "spec.controlPlane.ontologyService.autoscaling.minReplicas". Empty for problems
	// with the document as a whole, such as a YAML syntax error.
	Field string `json:"field"`
	// Line is the 1-based line of the field in the file or, when the field is absent
	// (a missing required field), of its nearest enclosing field. 0 when unknown, as for
	// an in-memory object.
	Line int `json:"line,omitempty"`
	// Type is the kind of problem, as in k8s.io/apimachinery field errors:
	// "Invalid value", "Required value", "Unsupported value", "Forbidden", ...
	Type string `json:"type"`
	// Value is the offending value as the API server would print it; empty when the
	// type of problem does not show one.
	Value string `json:"value,omitempty"`
	// Message says what is wrong and, where possible, what would be right.
	Message string `json:"message"`
	// Document is the 1-based index of the document in a file of several documents
	// (empty documents are not counted); 0 for a file of one document.
	Document int `json:"document,omitempty"`
}

// IncompleteNote is the line that follows the issues of an *Error whose Incomplete is
// set, in every view of it.
const IncompleteNote = "(some validation rules were not checked because of the errors above; fix them to see any others)"

// Error lists every issue on its own line, prefixed with file:line so editors and CI
// logs can jump to it:
//
//	platform.yaml: 2 errors
//	  platform.yaml:14: spec.controlPlane.ontologyService.autoscaling.minReplicas: Invalid value: ...
//
// `validate` prints the same lines (printers.ValidationResult), so a problem reads the
// same whichever command found it.
func (e *Error) Error() string {
	var b strings.Builder
	name := e.File
	if name == "" {
		name = "invalid OntoPlatform"
	}
	n := len(e.Issues)
	fmt.Fprintf(&b, "%s: %d error", name, n)
	if n != 1 {
		b.WriteString("s")
	}
	for _, is := range e.Issues {
		b.WriteString("\n  ")
		if e.File != "" {
			b.WriteString(is.Location(e.File) + ": ")
		}
		b.WriteString(is.String())
	}
	if e.Incomplete {
		b.WriteString("\n  " + IncompleteNote)
	}
	return b.String()
}

// Location is where the issue is, as compilers print it: "file:line", or the file
// alone when the line is unknown (an empty file).
func (is Issue) Location(file string) string {
	if is.Line > 0 {
		return file + ":" + strconv.Itoa(is.Line)
	}
	return file
}

// String renders the issue as k8s.io/apimachinery renders a field error,
// "field: Type: value: message", or "field: Text()" in general. An issue with no
// field, a problem with the document as a whole, is its text alone: a line never has
// an empty field segment.
func (is Issue) String() string {
	if is.Field == "" {
		return is.Text()
	}
	return is.Field + ": " + is.Text()
}

// Text is the issue after its field, in words: the kind of problem, the offending
// value and what is wrong ("Invalid value: -1: should be greater than or equal to
// 0"). The kind is left out where the message names it itself, so nothing is said
// twice or wrongly: a problem with the document as a whole ("invalid YAML: ...", "the
// file is empty: ..."), other than an internal error, and an unknown field, which the API server reports as
// `unknown field "x"` rather than as a forbidden value.
func (is Issue) Text() string {
	var parts []string
	if (is.Field != "" || is.Type == field.ErrorTypeInternal.String()) && !isUnknownField(is) {
		parts = append(parts, is.Type)
		if is.Value != "" {
			parts = append(parts, is.Value)
		}
	}
	if is.Message != "" {
		parts = append(parts, is.Message)
	}
	if len(parts) == 0 { // every issue this package makes has a message; be safe anyway
		parts = append(parts, is.Type)
	}
	return strings.Join(parts, ": ")
}

// newIssue converts a field error. The value is cut out of the error's own rendering
// so it reads exactly as the API server would print it.
func newIssue(fe *field.Error, line, doc int) Issue {
	typ := fe.Type.String()
	value := strings.TrimPrefix(fe.ErrorBody(), typ)
	if fe.Detail != "" {
		value = strings.TrimSuffix(value, ": "+fe.Detail)
	}
	value = strings.TrimPrefix(value, ": ")
	path := fe.Field
	if path == "<nil>" { // field.Path's rendering of the root
		path = ""
	}
	return Issue{Field: path, Line: line, Type: typ, Value: value, Message: fe.Detail, Document: doc}
}

// sortIssues orders issues by line, then field, then message, and drops exact
// duplicates (the same CEL rule can fail identically through two routes).
func sortIssues(issues []Issue) []Issue {
	slices.SortStableFunc(issues, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.Document, b.Document), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(issues)
}
