/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package spec loads OntoPlatform files and validates them offline with the same
// structural schema, defaults and CEL rules the API server applies to the CRD
// generated from api/v1alpha1, plus the checks a schema cannot express (the release
// catalog). Every problem is reported at once, each with its field path and line.
package spec

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// StdinName is the file name used in errors for input read from standard input.
const StdinName = "<stdin>"

// Validator loads and validates OntoPlatform documents offline. Its first validation
// compiles the CRD's schema and CEL rules, which is costly (most of the CPU time of a
// plan whose render is cached), so build one and reuse it; a document its Memo
// remembers as valid is not validated again, and then nothing is compiled. It is safe
// for concurrent use once Memo is set.
type Validator struct {
	catalog *release.Catalog
	// Memo, when set, remembers the documents this validator found valid, across
	// processes (see Memo). Set it before the first use.
	Memo Memo

	schemaOnce sync.Once
	// schema is built by the first validation (loadSchema); read it only after that.
	schema    *crdSchema
	schemaErr error
}

// NewValidator returns a validator of the CRD compiled into the binary. catalog is
// the release catalog spec.version must belong to; nil skips that check (for callers
// that only need the schema). The schema is built on first use; an error building
// it is returned then.
func NewValidator(catalog *release.Catalog) (*Validator, error) {
	return &Validator{catalog: catalog}, nil
}

// loadSchema builds the CRD's schema and CEL rules once; every entry point that
// reads v.schema calls it first.
func (v *Validator) loadSchema() error {
	v.schemaOnce.Do(func() {
		v.schema, v.schemaErr = defaultCRDSchema()
		if v.schemaErr != nil {
			v.schemaErr = fmt.Errorf("build ontoplatform validator: %w", v.schemaErr)
		}
	})
	return v.schemaErr
}

// Load decodes, defaults and validates every document of data, a YAML stream or JSON;
// filename names the input in errors. Empty documents are skipped; a document of
// another kind is an error. When anything is invalid it returns no objects and an
// *Error listing every problem, so a caller never acts on half a file.
func (v *Validator) Load(filename string, data []byte) ([]*v1alpha1.OntoPlatform, error) {
	out, _, err := v.LoadSources(filename, data)
	return out, err
}

// LoadSources is Load, plus where each platform came from (in the same order), to
// place at their lines the issues found once the live platform is known
// (CheckTransition).
func (v *Validator) LoadSources(filename string, data []byte) ([]*v1alpha1.OntoPlatform, []Source, error) {
	docs := splitDocuments(data)
	var (
		out        []*v1alpha1.OntoPlatform
		sources    []Source
		issues     []Issue
		incomplete bool
	)
	for i, d := range docs {
		index := 0
		if len(docs) > 1 {
			index = i + 1
		}
		p, c := v.loadDocument(d, index)
		issues = append(issues, c.issues...)
		incomplete = incomplete || c.incomplete
		if p != nil {
			out = append(out, p)
			sources = append(sources, Source{File: filename, Document: index, lines: c.lines})
		}
	}
	if len(issues) == 0 && len(out) == 0 {
		issues = append(issues, Issue{Type: field.ErrorTypeRequired.String(), Message: emptyFileMessage(filename)})
	}
	if len(issues) > 0 {
		return nil, nil, &Error{File: filename, Issues: sortIssues(issues), Incomplete: incomplete}
	}
	return out, sources, nil
}

// LoadFile reads path, or stdin when path is "-", and calls Load.
func (v *Validator) LoadFile(path string, stdin io.Reader) ([]*v1alpha1.OntoPlatform, error) {
	out, _, err := v.LoadFileSources(path, stdin)
	return out, err
}

// LoadFileSources reads path, or stdin when path is "-", and calls LoadSources.
func (v *Validator) LoadFileSources(path string, stdin io.Reader) ([]*v1alpha1.OntoPlatform, []Source, error) {
	var (
		data []byte
		err  error
		name = path
	)
	if path == "-" {
		name = StdinName
		if stdin == nil {
			return nil, nil, fmt.Errorf("read %s: no standard input", name)
		}
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	return v.LoadSources(name, data)
}

// Validate defaults and validates an in-memory object, for instance after `scale`
// changed its spec, and writes the defaults into p. Issues carry no line. An empty
// apiVersion or kind is taken as OntoPlatform's, since typed clients often leave
// TypeMeta empty. Status is not validated: the API server ignores it on create and
// update, status having its own subresource.
func (v *Validator) Validate(p *v1alpha1.OntoPlatform) error {
	if p == nil {
		return fmt.Errorf("validate ontoplatform: nil object")
	}
	if err := v.loadSchema(); err != nil {
		return err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return fmt.Errorf("validate ontoplatform %s: %w", p.Name, err)
	}
	if obj["apiVersion"] == nil || obj["apiVersion"] == "" {
		obj["apiVersion"] = v1alpha1.GroupVersion.String()
	}
	if obj["kind"] == nil || obj["kind"] == "" {
		obj["kind"] = v1alpha1.Kind
	}
	status := p.Status.DeepCopy()
	c := &collector{}
	// CEL takes a context only to cancel a long evaluation; offline validation is
	// bounded by the per-call cost limit, so it needs no caller context.
	out := v.check(context.Background(), obj, c)
	if len(c.issues) > 0 {
		return &Error{Issues: sortIssues(c.issues), Incomplete: c.incomplete}
	}
	*p = *out
	p.Status = *status
	return nil
}
