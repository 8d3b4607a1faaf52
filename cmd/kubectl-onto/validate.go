/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"

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
	cmd := &cobra.Command{
		Use:   "validate -f FILE",
		Short: "Check a platform file offline, with the same schema and rules as the API server",
		Long: `Validate decodes the file strictly (unknown fields and duplicate keys are errors),
applies the CRD's defaults and checks it against the CRD's OpenAPI schema and CEL rules
and the release catalog, all without a cluster. Every problem is reported at once, with
its field path and line. Exits 1 when the file is invalid.

A platform whose file names no namespace goes to -n's, else the kubeconfig context's,
else "default"; a file naming another namespace than -n is refused, as kubectl refuses
it.`,
		Example: `  kubectl onto validate -f platform.yaml
  kubectl onto validate -f platform.yaml -o json | jq '.issues[].field'
  cat platform.yaml | kubectl onto validate -f -`,
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

// Run validates the file and prints the result; an invalid file exits 1.
func (o *ValidateOptions) Run(_ context.Context) error {
	res := printers.ValidationResult{File: platform.InputName(o.Filename)}
	platforms, err := o.readPlatforms(o.Filename)
	var invalid *spec.Error
	switch {
	case errors.As(err, &invalid):
		res.Issues, res.Incomplete = invalid.Issues, invalid.Incomplete
	case err != nil:
		return err
	default:
		res.Valid = true
		for _, p := range platforms {
			res.Platforms = append(res.Platforms, printers.PlatformRef{Namespace: p.Namespace, Name: p.Name, Version: p.Spec.Version})
			res.Warnings = append(res.Warnings, spec.Warnings(p)...)
		}
	}
	if err := printers.Write(o.Out, o.format, o.Terminal(o.Out), res); err != nil {
		return err
	}
	if !res.Valid {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("%s is invalid", o.Filename), Silent: true}
	}
	return nil
}
