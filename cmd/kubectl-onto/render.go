/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// RenderOptions are the options of `kubectl onto render`.
type RenderOptions struct {
	*GlobalOptions
	FileFlags
	OutputFlags
	// Plane limits the output to one plane.
	Plane string

	format printers.Format
	plane  v1alpha1.Plane
}

// NewCmdRender returns `kubectl onto render`.
func NewCmdRender(g *GlobalOptions) *cobra.Command {
	o := &RenderOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "render -f FILE",
		Short: "Print every object the platform file becomes, plane by plane",
		Long: `Render validates the file offline and prints every Kubernetes object of the
platform in install order (tenancy, infrastructure, control, data, intelligence,
gateway, observability): for review, or to apply to a cluster without the operator.

For GitOps, the repository holds the OntoPlatform file, not this output: Flux or Argo
CD applies the OntoPlatform, and the in-cluster watch (kubectl onto watch install)
renders, applies, upgrades and repairs the platform from it.

Secrets the cluster generates (passwords, keys, the platform's CA and certificates)
are left out: apply or the watch creates them, once. Autoscaled Deployments carry no
replicas: their HorizontalPodAutoscaler owns the count.

A platform whose file names no namespace renders into -n's, else the kubeconfig
context's, else "default"; a file naming another namespace than -n is refused, as
kubectl refuses it.`,
		Example: `  kubectl onto render -f platform.yaml > platform.rendered.yaml
  kubectl onto render -f platform.yaml --plane control
  kubectl onto render -f platform.yaml -o json | jq '.items[].kind' | sort | uniq -c`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	o.FileFlags.AddFlags(cmd.Flags())
	o.OutputFlags.AddFlags(cmd.Flags(), "yaml", "json", "name")
	cmd.Flags().StringVar(&o.Plane, "plane", "", "Print only this plane (tenancy, infrastructure, control, data, intelligence, gateway, observability)")
	return cmd
}

// Complete parses the output format and plane.
func (o *RenderOptions) Complete(_ []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	if o.Plane != "" {
		o.plane, err = parsePlane(o.Plane)
	}
	return err
}

// Validate checks the flags.
func (o *RenderOptions) Validate() error {
	return o.FileFlags.Validate()
}

// Run renders every platform of the file and prints the objects.
func (o *RenderOptions) Run(_ context.Context) error {
	platforms, err := o.loadPlatforms(o.FileFlags)
	if err != nil {
		return err
	}
	var out []printers.PlaneObjects
	for _, lp := range platforms {
		planes, err := lp.Render()
		if err != nil {
			return err
		}
		for _, p := range planes {
			if o.plane != "" && p.Name != o.plane {
				continue
			}
			// What apply creates in the cluster itself stays out, so that kubectl or a
			// GitOps tool can apply the output as it is.
			objs, left := plan.StandaloneObjects(p.Objects)
			out = append(out, printers.PlaneObjects{Plane: string(p.Name), Objects: objs, LeftOut: left})
		}
	}
	if o.format != printers.FormatYAML {
		// YAML says it in a comment in place of each; JSON and names have no room.
		for _, p := range out {
			for _, l := range p.LeftOut {
				fmt.Fprintf(o.ErrOut, "note: %s\n", l)
			}
		}
	}
	switch o.format {
	case printers.FormatJSON:
		return printers.WriteObjectsJSON(o.Out, out)
	case printers.FormatName:
		return printers.WriteObjectNames(o.Out, out)
	}
	return printers.WriteObjectsYAML(o.Out, out)
}
