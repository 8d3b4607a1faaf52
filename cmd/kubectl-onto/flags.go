/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
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
	// Many is set by commands that act on several platforms (apply, plan): -f may then
	// name a directory, and -R is registered.
	Many bool
	// Recursive reads the subdirectories of a directory given with -f too (-R).
	Recursive bool
}

// AddFlags registers -f/--filename and --patch, and -R/--recursive when Many.
func (f *FileFlags) AddFlags(flags *pflag.FlagSet) {
	if f.Many {
		flags.StringVarP(&f.Filename, "filename", "f", "", "OntoPlatform file (YAML or JSON, one or more documents; - reads stdin), or a directory of them (its .yaml, .yml and .json files)")
		flags.BoolVarP(&f.Recursive, "recursive", "R", false, "Read the subdirectories of the directory given with -f too")
	} else {
		flags.StringVarP(&f.Filename, "filename", "f", "", "OntoPlatform file (YAML or JSON; - reads stdin)")
	}
	flags.StringArrayVar(&f.PatchFiles, "patch", nil, "Kustomize patches for this run only, applied after spec.patches (repeatable): a list of {patch, target} entries, or strategic-merge patch documents; to keep a patch, put it in spec.patches")
}

// Validate requires the file.
func (f *FileFlags) Validate() error {
	if f.Filename == "" {
		return fmt.Errorf("a platform file is required: pass -f platform.yaml (kubectl onto init writes a starter)")
	}
	return nil
}

// ParallelFlags tune a run over several platforms (a file or directory holding more than
// one): how many run at once, and whether the first failure stops the others.
type ParallelFlags struct {
	Parallel int
	FailFast bool
}

// AddFlags registers --parallel and --fail-fast.
func (f *ParallelFlags) AddFlags(flags *pflag.FlagSet) {
	flags.IntVar(&f.Parallel, "parallel", 4, "With several platforms: how many run at once (each holds its own lock, inventory, status and revision)")
	flags.BoolVar(&f.FailFast, "fail-fast", false, "With several platforms: cancel the others at the first failure (their locks are released; the cancelled are reported as such)")
}

// Validate checks --parallel.
func (f *ParallelFlags) Validate() error {
	if f.Parallel < 1 {
		return fmt.Errorf("invalid --parallel %d: it must be at least 1", f.Parallel)
	}
	return nil
}

// OutputFlags hold -o for commands that report a result.
type OutputFlags struct {
	Output string
	// formats are the values -o takes here; the first is the default.
	formats []string
}

// AddFlags registers -o/--output with the formats the command supports, the first
// being the default; shell completion offers them.
func (o *OutputFlags) AddFlags(flags *pflag.FlagSet, formats ...string) {
	o.formats, o.Output = formats, formats[0]
	usage := strings.ReplaceAll(strings.Join(formats, "|"), string(printers.FormatJSONPath), "jsonpath=TEMPLATE")
	flags.VarP(&outputValue{o}, "output", "o", "Output format: "+usage)
	_ = flags.SetAnnotation("output", outputFormatsAnnotation, formats)
}

// Format is the parsed -o.
func (o *OutputFlags) Format() (printers.Format, error) {
	allowed := make([]printers.Format, len(o.formats))
	for i, f := range o.formats {
		allowed[i] = printers.Format(f)
	}
	return printers.ParseFormat(o.Output, allowed...)
}

// outputValue is -o as a flag value that refuses a format the command does not have,
// so a shared setting (ONTO_OUTPUT, output: in the config file) can be skipped where
// it does not apply instead of breaking the command.
type outputValue struct{ o *OutputFlags }

func (v *outputValue) String() string { return v.o.Output }
func (v *outputValue) Type() string   { return "string" }
func (v *outputValue) Set(s string) error {
	old := v.o.Output
	v.o.Output = s
	if _, err := v.o.Format(); err != nil {
		v.o.Output = old
		return err
	}
	return nil
}

// commandSpecific marks a flag value whose valid values differ between commands:
// a shared setting that is invalid for this command is skipped, not an error.
func (v *outputValue) commandSpecific() {}

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

// DryRunFlags hold --dry-run with kubectl's meaning in every command that writes:
// none (the default) writes; client sends no write at all; server sends every write
// as a dry run the API server validates; a bare --dry-run is client.
type DryRunFlags struct {
	DryRun string
}

// AddFlags registers --dry-run; usage says what client and server do in this command.
func (d *DryRunFlags) AddFlags(flags *pflag.FlagSet, usage string) {
	flags.StringVar(&d.DryRun, "dry-run", string(apply.DryRunNone), "none|client|server (a bare --dry-run is client): "+usage)
	flags.Lookup("dry-run").NoOptDefVal = string(apply.DryRunClient)
}

// Strategy validates --dry-run.
func (d *DryRunFlags) Strategy() (apply.DryRunStrategy, error) {
	switch s := apply.DryRunStrategy(d.DryRun); s {
	case apply.DryRunNone, apply.DryRunClient, apply.DryRunServer:
		return s, nil
	}
	return "", fmt.Errorf("invalid --dry-run %q: use none, client or server (a bare --dry-run is client)", d.DryRun)
}

// PlatformArg is the NAME argument of commands that act on an installed platform,
// with the namespace it is looked up in: -n, else the kubeconfig context's.
type PlatformArg struct {
	// Name of the platform; empty picks the only one in the namespace.
	Name      string
	namespace string
}

// complete reads NAME from args, when given, and resolves the namespace.
func (a *PlatformArg) complete(g *GlobalOptions, args []string) (err error) {
	if len(args) > 0 {
		a.Name = args[0]
	}
	a.namespace, err = g.currentNamespace()
	return err
}

// runWithin runs run under timeout (0: no limit). When the timeout is what stopped it,
// the error says so, and hint says what to do or where the progress is.
func runWithin(ctx context.Context, timeout time.Duration, command, hint string, run func(context.Context) error) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	err := run(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s did not finish within --timeout=%s (%s): %w", command, timeout, hint, err)
	}
	return err
}
