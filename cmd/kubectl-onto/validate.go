/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// ValidateOptions are the options of `kubectl onto validate`.
type ValidateOptions struct {
	*GlobalOptions
	FileFlags
	OutputFlags
	format printers.Format
}

// NewCmdValidate returns `kubectl onto validate`.
func NewCmdValidate(g *GlobalOptions) *cobra.Command {
	o := &ValidateOptions{GlobalOptions: g}
	o.FileFlags.Many = true
	cmd := &cobra.Command{
		Use:   "validate -f FILE|DIR",
		Short: "Check a platform file offline, with the same schema and rules as the API server",
		Long: `Validate decodes the file strictly (unknown fields and duplicate keys are errors),
applies the CRD's defaults and checks it against the CRD's OpenAPI schema and CEL rules
and the release catalog, all without a cluster. Every problem is reported at once, with
its field path and line. Exits 1 when the file is invalid.

-f may name a directory, as for plan and apply: each of its .yaml, .yml and .json
files is checked (with -R, those of its subdirectories too), each result and issue
names its file, and two platforms in one namespace are refused.

A platform whose file names no namespace goes to -n's, else the kubeconfig context's,
else "default"; a file naming another namespace than -n is refused, as kubectl refuses
it.`,
		Example: `  kubectl onto validate -f platform.yaml
  kubectl onto validate -f platform.yaml -o json | jq '.issues[].field'
  cat platform.yaml | kubectl onto validate -f -
  kubectl onto validate -f tenants/`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	o.FileFlags.AddFlags(cmd.Flags())
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json", "yaml", "jsonpath")
	return cmd
}

// Complete parses the output format.
func (o *ValidateOptions) Complete(_ []string) (err error) {
	o.format, err = o.OutputFlags.Format()
	return err
}

// Validate checks the flags.
func (o *ValidateOptions) Validate() error {
	return o.FileFlags.Validate()
}

// Run validates the file, or every platform file of the directory, and prints the
// result; an invalid file exits 1.
func (o *ValidateOptions) Run(_ context.Context) error {
	l, err := o.loader()
	if err != nil {
		return err
	}
	l.Recursive = o.Recursive
	files, err := l.ReadFiles(o.Filename)
	if err != nil {
		return err
	}
	if info, statErr := os.Stat(o.Filename); o.Filename == "-" || statErr != nil || !info.IsDir() {
		res, err := validationResult(files[0])
		if err != nil {
			return err
		}
		return o.write(res, res.Valid)
	}
	all := printers.ValidationResults{Directory: o.Filename, Valid: true, Files: []printers.ValidationResult{}}
	var errs []error
	for _, f := range files {
		res, err := validationResult(f)
		if err != nil {
			// Not a problem of the file's content (a -n it contradicts): said at the
			// end, after the other files' results.
			errs = append(errs, err)
			all.Valid = false
			continue
		}
		all.Files = append(all.Files, res)
		all.Valid = all.Valid && res.Valid
	}
	if err := platform.DistinctNamespaces(files); err != nil {
		all.Errors = strings.Split(err.Error(), "\n")
		all.Valid = false
	}
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), all); err != nil {
		return err
	}
	if len(errs) > 0 {
		// Said after the files' results, and not silently: the results do not hold them.
		return errors.Join(errs...)
	}
	if !all.Valid {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("%s is invalid", o.Filename), Silent: true}
	}
	return nil
}

// validationResult is the result of one file; the error is one that is not a problem
// of its content, such as an unreadable file.
func validationResult(f platform.FileResult) (printers.ValidationResult, error) {
	res := printers.ValidationResult{File: f.File}
	var invalid *spec.Error
	switch {
	case errors.As(f.Err, &invalid):
		res.Issues, res.Incomplete = invalid.Issues, invalid.Incomplete
	case f.Err != nil:
		return res, f.Err
	default:
		res.Valid = true
		for _, p := range f.Platforms {
			res.Platforms = append(res.Platforms, printers.PlatformRef{Namespace: p.Namespace, Name: p.Name, Version: p.Spec.Version})
			res.Warnings = append(res.Warnings, spec.Warnings(p)...)
		}
	}
	return res, nil
}

// write prints the result; an invalid input exits 1, silently since the result says why.
func (o *ValidateOptions) write(res printers.TextWriter, valid bool) error {
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), res); err != nil {
		return err
	}
	if !valid {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("%s is invalid", o.Filename), Silent: true}
	}
	return nil
}
