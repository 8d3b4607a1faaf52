/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// FileFlags select the platform file, shared by every command that reads one.
type FileFlags struct {
	// Filename of the platform file; "-" reads stdin.
	Filename string
	// PatchFiles hold one-off kustomize patches, applied after everything the spec
	// renders (spec.patches included). They are not stored with the platform.
	PatchFiles []string
	// WarnUnstoredPatches makes loading warn, on stderr, that PatchFiles are not
	// stored: set by commands that write the platform (apply), where the next run
	// without the same --patch silently reverts what they changed.
	WarnUnstoredPatches bool
}

// AddFlags registers -f/--filename and --patch.
func (f *FileFlags) AddFlags(flags *pflag.FlagSet) {
	flags.StringVarP(&f.Filename, "filename", "f", "", "OntoPlatform file (YAML or JSON; - reads stdin)")
	flags.StringArrayVar(&f.PatchFiles, "patch", nil, "Kustomize patches for this run only, applied after spec.patches (repeatable): a list of {patch, target} entries, or strategic-merge patch documents; to keep a patch, put it in spec.patches")
}

// Validate requires the file.
func (f *FileFlags) Validate() error {
	if f.Filename == "" {
		return fmt.Errorf("a platform file is required: pass -f platform.yaml (kubectl onto init writes a starter)")
	}
	return nil
}

// OutputFlags hold -o for commands that report a result.
type OutputFlags struct {
	Output string
}

// AddFlags registers -o/--output with the formats the command supports, which shell
// completion offers.
func (o *OutputFlags) AddFlags(flags *pflag.FlagSet, formats ...string) {
	flags.StringVarP(&o.Output, "output", "o", "text", "Output format: "+strings.Join(formats, "|"))
	_ = flags.SetAnnotation("output", outputFormatsAnnotation, formats)
}

// parsePlane turns --plane into a Plane, listing the valid names on error.
func parsePlane(name string) (v1alpha1.Plane, error) {
	var names []string
	for _, p := range v1alpha1.Planes() {
		if string(p) == name {
			return p, nil
		}
		names = append(names, string(p))
	}
	return "", fmt.Errorf("unknown plane %q: use one of %s", name, strings.Join(names, ", "))
}

// commandOptions is the kubectl Complete/Validate/Run shape every command's Options has.
type commandOptions interface {
	// Complete fills in what the flags leave implicit (defaults, clients, formats).
	Complete(args []string) error
	// Validate checks flag combinations, before any work.
	Validate() error
	// Run does the work.
	Run(ctx context.Context) error
}

// runCommand is the RunE of every command: Complete, Validate, then Run with the
// command's context, so Ctrl-C cancels every request.
func runCommand(o commandOptions) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}
