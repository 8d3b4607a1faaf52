/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// VersionOptions are the options of `kubectl onto version`.
type VersionOptions struct {
	*GlobalOptions
	OutputFlags
	format printers.Format
}

// versionResult is what `version` reports.
type versionResult struct {
	buildinfo.Info
	// PlatformVersions are the versions in the release catalog.
	PlatformVersions []string `json:"platformVersions"`
}

// WriteText prints the version the way `kubectl version --client` does.
func (r versionResult) WriteText(out io.Writer, _ *printers.Terminal) error {
	_, err := fmt.Fprintf(out, "kubectl-onto %s (%s, %s)\nplatform versions: %v\n",
		r.Version, r.GoVersion, r.Platform, r.PlatformVersions)
	return err
}

// NewCmdVersion returns `kubectl onto version`.
func NewCmdVersion(g *GlobalOptions) *cobra.Command {
	o := &VersionOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the platform versions it can install",
		Example: `  kubectl onto version
  kubectl onto version -o json`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	o.OutputFlags.AddFlags(cmd.Flags(), "text", "json", "yaml", "jsonpath")
	return cmd
}

// Complete parses the output format.
func (o *VersionOptions) Complete(_ []string) (err error) {
	o.format, err = o.OutputFlags.Format()
	return err
}

// Validate has nothing to check: version takes no arguments.
func (o *VersionOptions) Validate() error { return nil }

// Run prints the version.
func (o *VersionOptions) Run(_ context.Context) error {
	catalog, err := o.Catalog()
	if err != nil {
		return err
	}
	res := versionResult{Info: buildinfo.Get(), PlatformVersions: catalog.Versions()}
	return printers.Write(o.Out, o.format, o.Terminal(o.Out), res)
}
