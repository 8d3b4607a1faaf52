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
		Use:   "init",
		Short: "Write a starter platform.yaml",
		Long: `Init writes a commented OntoPlatform file to start from. The minimal profile runs
one replica of everything; the production profile is replicated, autoscaled, with GPU
reasoning, TLS ingress, metrics and tracing. The file is validated before it is written,
and an existing file is never overwritten without --force.`,
		Example: `  kubectl onto init
  kubectl onto init --profile production --name onto-prod --namespace onto-system -f prod.yaml
  kubectl onto init --profile minimal -f - | kubectl onto validate -f -`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Profile, "profile", "minimal", "Starter profile: minimal|production")
	f.StringVarP(&o.File, "filename", "f", "platform.yaml", "File to write (- prints to stdout)")
	f.StringVar(&o.Name, "name", "onto", "Name of the OntoPlatform")
	f.StringVar(&o.Namespace, "platform-namespace", "onto-system", "Namespace the platform runs in")
	f.StringVar(&o.Version, "platform-version", "", "Platform version (default: the newest in the release catalog)")
	f.BoolVar(&o.Force, "force", false, "Overwrite the file if it exists")
	return cmd
}

// Complete picks the newest catalog version when none is given, and takes kubectl's
// -n as the platform namespace when it is set and --platform-namespace is not.
func (o *InitOptions) Complete(_ []string) error {
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
	if ns := *o.ConfigFlags.Namespace; ns != "" && o.Namespace == "onto-system" {
		o.Namespace = ns
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
	fmt.Fprintf(o.ErrOut, "wrote %s (profile %s, version %s); next: kubectl onto validate -f %s\n", o.File, o.Profile, o.Version, o.File)
	return nil
}
