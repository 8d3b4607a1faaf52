/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/manifests"
)

// InitOptions are the options of `kubectl onto init`.
type InitOptions struct {
	*GlobalOptions
	// Profile is the starter shape: minimal or production.
	Profile string
	// File to write; "-" prints to stdout.
	File string
	// Name, Namespace and Version of the platform in the starter file.
	Name, Namespace, Version string
	// Force overwrites an existing file.
	Force bool
}

// initProfiles are the starter files `init` can write.
func initProfiles() []string { return []string{"minimal", "production"} }

// NewCmdInit returns `kubectl onto init`.
func NewCmdInit(g *GlobalOptions) *cobra.Command {
	o := &InitOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "init [FILE]",
		Short: "Write a starter platform file",
		Long: `Init writes a commented OntoPlatform file to start from, to FILE (default
platform.yaml; - prints it). The minimal profile runs one replica of everything; the
production profile is replicated, autoscaled, with GPU reasoning, TLS ingress, metrics
and tracing. The file is validated before it is written, and an existing file is never
overwritten without --force.

The platform is named --name (default onto) and placed in -n's namespace, or, without
-n, in a namespace of its own name: a namespace holds one platform.`,
		Example: `  kubectl onto init                                             # platform.yaml: platform onto in namespace onto
  kubectl onto init --profile production --name onto-prod -n onto-prod prod.yaml
  kubectl onto init --profile minimal - | kubectl onto validate -f -`,
		Args: cobra.MaximumNArgs(1),
		RunE: runCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Profile, "profile", "minimal", "Starter profile: minimal|production")
	f.StringVar(&o.Name, "name", "onto", "Name of the OntoPlatform")
	f.StringVar(&o.Version, "platform-version", "", "Platform version (default: the newest in the release catalog)")
	f.BoolVar(&o.Force, "force", false, "Overwrite the file if it exists")
	// Before FILE was an argument, -f named the output, while -f is the input
	// everywhere else; and the namespace had a flag of its own instead of -n. Both
	// still work, with a warning, so scripts do not break.
	f.StringVarP(&o.File, "filename", "f", "", "File to write")
	_ = f.MarkHidden("filename")
	f.StringVar(&o.Namespace, "platform-namespace", "", "Namespace the platform runs in")
	_ = f.MarkHidden("platform-namespace")
	return cmd
}

// Complete takes FILE, picks the newest catalog version when none is given, and the
// namespace from -n, else the platform's name.
func (o *InitOptions) Complete(args []string) error {
	// cobra drops pflag's own deprecation notices, so they are printed here.
	if o.File != "" {
		fmt.Fprintln(o.ErrOut, "Warning: init -f is deprecated (-f reads a file in every other command): pass the file to write as an argument, kubectl onto init FILE")
	}
	if o.Namespace != "" {
		fmt.Fprintln(o.ErrOut, "Warning: --platform-namespace is deprecated: use -n/--namespace")
	}
	if len(args) == 1 {
		if o.File != "" && o.File != args[0] {
			return fmt.Errorf("two files to write: %s (argument) and %s (-f): pass one", args[0], o.File)
		}
		o.File = args[0]
	}
	if o.File == "" {
		o.File = "platform.yaml"
	}
	if o.Version == "" {
		catalog, err := o.Catalog()
		if err != nil {
			return err
		}
		vs := catalog.Versions()
		if len(vs) == 0 {
			return errors.New("the release catalog is empty")
		}
		o.Version = vs[len(vs)-1]
	}
	if ns := *o.ConfigFlags.Namespace; ns != "" {
		if o.Namespace != "" && o.Namespace != ns {
			return fmt.Errorf("-n %s and --platform-namespace %s disagree: pass -n only", ns, o.Namespace)
		}
		o.Namespace = ns
	}
	if o.Namespace == "" {
		o.Namespace = o.Name
	}
	return nil
}

// Validate checks the profile name.
func (o *InitOptions) Validate() error {
	if slices.Contains(initProfiles(), o.Profile) {
		return nil
	}
	return fmt.Errorf("unknown profile %q: use one of %v", o.Profile, initProfiles())
}

// Run fills in the profile, validates the result and writes it.
func (o *InitOptions) Run(_ context.Context) error {
	tmplText, err := fs.ReadFile(manifests.FS, path.Join(manifests.ProfilesDir, o.Profile+".yaml"))
	if err != nil {
		return err
	}
	tmpl, err := template.New(o.Profile).Option("missingkey=error").Parse(string(tmplText))
	if err != nil {
		return fmt.Errorf("profile %s: %w", o.Profile, err)
	}
	var buf bytes.Buffer
	data := map[string]string{"Name": o.Name, "Namespace": o.Namespace, "Version": o.Version, "File": o.File}
	if o.File == "-" {
		data["File"] = "platform.yaml"
	}
	if err := tmpl.Execute(&buf, data); err != nil {
		return fmt.Errorf("profile %s: %w", o.Profile, err)
	}
	// A starter that does not validate would be a bug, or a bad --name/--version: catch
	// both before anything is written.
	v, err := o.Validator()
	if err != nil {
		return err
	}
	if _, err := v.Load(o.File, buf.Bytes()); err != nil {
		return fmt.Errorf("the %s profile with these flags is invalid: %w", o.Profile, err)
	}
	if o.File == "-" {
		_, err := o.Out.Write(buf.Bytes())
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.Force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(o.File, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: pass --force to overwrite it, or -f to write elsewhere", o.File)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "wrote %s: OntoPlatform %s in namespace %s (profile %s, version %s); next: kubectl onto validate -f %s\n",
		o.File, o.Name, o.Namespace, o.Profile, o.Version, o.File)
	return nil
}
