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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// DefaultWatchNamespace is where `watch install` puts the watch without -n.
const DefaultWatchNamespace = "kubectl-onto-system"

// WatchInstallOptions are the options of `kubectl onto watch install`.
type WatchInstallOptions struct {
	*GlobalOptions
	OutputFlags
	// Image runs the watch; its entrypoint must be kubectl-onto. Default: the image
	// of this build's version (buildinfo), none for a dev build.
	Image string
	// Namespaces the watch watches; AllNamespaces every one; neither, its own.
	Namespaces    []string
	AllNamespaces bool
	Replicas      int32
	// Apply writes the objects (server-side apply) instead of printing them.
	Apply          bool
	ForceConflicts bool

	install controller.InstallOptions
	format  printers.Format
}

// NewCmdWatchInstall returns `kubectl onto watch install`.
func NewCmdWatchInstall(g *GlobalOptions) *cobra.Command {
	o := &WatchInstallOptions{GlobalOptions: g}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Print (or --apply) what runs the watch in the cluster, with least privilege",
		Long: `Install prints the objects that run kubectl onto watch inside the cluster, for
review or a GitOps repository, or with --apply writes them (server-side apply, field
manager kubectl-onto):

  - the watch's namespace (-n, default ` + DefaultWatchNamespace + `), labelled to enforce
    the PodSecurity restricted level;
  - its ServiceAccount;
  - two ValidatingAdmissionPolicies bound to that ServiceAccount alone, for what RBAC
    cannot say: it writes only in a platform's namespace (labelled
    applyset.kubernetes.io/part-of by apply, or onto.paas/watch=enabled) and patches
    only such a Namespace, never a service-account-token Secret, a
    privileged, host-namespace, host-port or hostPath pod template, added
    capabilities, a Service with externalIPs, a Namespace label or annotation not its
    own, nor relaxes PodSecurity; the OntoPlatform CRD is only dry-run;
  - a ClusterRole with exactly what the watch does in a platform's namespace (no
    wildcard), bound by a RoleBinding in each watched namespace (--namespaces,
    default the watch's own), or cluster-wide with -A;
  - a ClusterRole with what it does outside namespaces (read the OntoPlatform CRD,
    apply the platforms' Namespaces, read StorageClasses), bound cluster-wide;
  - a Role for its leader election Lease and Events, in its namespace;
  - a Deployment of --replicas pods (one leader writes, the others stand by) that
    passes PodSecurity restricted, with a read-only root filesystem and an emptyDir
    at /tmp, and a metrics Service on port 8080.

The pods run the image of this binary's version (` + buildinfo.ImageRepository + `:VERSION,
by digest when the build knows it; kubectl onto version -o json shows it). --image
runs another, whose entrypoint must be kubectl-onto of the same version: make
image-push IMAGE=REGISTRY/REPO builds one from this repository and prints its
reference. A development build knows no image and needs --image.`,
		Example: `  kubectl onto watch install --namespaces team-a,team-b > watch.yaml
  kubectl onto watch install -n onto-ops -A --apply
  kubectl onto watch install --image registry.example/kubectl-onto:1.0.0@sha256:... --apply
  kubectl onto watch install -o json | jq '.items[] | select(.kind == "ClusterRole") | .rules'`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Image, "image", "", "Image of the watch, its entrypoint kubectl-onto; default the image of this version")
	f.StringSliceVar(&o.Namespaces, "namespaces", nil, "Namespaces to watch (comma-separated); default the watch's own namespace")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Watch every namespace (its namespaced rules bound cluster-wide)")
	f.Int32Var(&o.Replicas, "replicas", 2, "Pods of the watch; one leader writes")
	f.BoolVar(&o.Apply, "apply", false, "Apply the objects to the cluster instead of printing them")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --apply, take over fields another field manager owns")
	o.OutputFlags.AddFlags(f, "yaml", "json")
	return cmd
}

// Complete resolves the image (--image, else this version's), the watch's namespace
// (-n, else the default; not the kubeconfig context's, which is where platforms live)
// and the output format.
func (o *WatchInstallOptions) Complete(_ []string) (err error) {
	if o.format, err = o.OutputFlags.Format(); err != nil {
		return err
	}
	if o.Image == "" {
		o.Image = buildinfo.Get().Image
	}
	ns := DefaultWatchNamespace
	if o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		ns = *o.ConfigFlags.Namespace
	}
	o.install = controller.InstallOptions{Image: o.Image, Namespace: ns, Namespaces: o.Namespaces, AllNamespaces: o.AllNamespaces, Replicas: o.Replicas}
	return nil
}

// Validate checks the flags.
func (o *WatchInstallOptions) Validate() error {
	if o.Image == "" {
		return fmt.Errorf("--image is required: this build (version %s) knows no image of its own; "+
			"build and push one with make image-push IMAGE=REGISTRY/REPO and pass the reference it prints as --image", buildinfo.Get().Version)
	}
	if o.AllNamespaces && len(o.Namespaces) > 0 {
		return fmt.Errorf("--all-namespaces and --namespaces exclude each other")
	}
	if o.Replicas < 1 {
		return fmt.Errorf("--replicas must be at least 1, not %d", o.Replicas)
	}
	if o.ForceConflicts && !o.Apply {
		return fmt.Errorf("--force-conflicts needs --apply")
	}
	return nil
}

// Run prints or applies the objects.
func (o *WatchInstallOptions) Run(ctx context.Context) error {
	objs, err := controller.InstallObjects(o.install)
	if err != nil {
		return err
	}
	if !o.Apply {
		if o.format == printers.FormatJSON {
			return printers.WriteObjectsJSON(o.Out, []printers.PlaneObjects{{Objects: objs}})
		}
		return writeYAMLDocuments(o, objs)
	}
	clients, err := o.Clients()
	if err != nil {
		return err
	}
	err = controller.ApplyInstall(ctx, clients, objs, o.ForceConflicts, func(live *unstructured.Unstructured) {
		fmt.Fprintf(o.Out, "%s serverside-applied\n", resourceName(live))
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "the watch is starting: kubectl -n %s rollout status deployment/%s\n", o.install.Namespace, controller.DefaultInstallName)
	return nil
}

// writeYAMLDocuments prints objs as one YAML stream, a document each, as kubectl
// apply -f reads it.
func writeYAMLDocuments(o *WatchInstallOptions, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("marshal %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if _, err := fmt.Fprintf(o.Out, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}

// resourceName is kind.group/name, as kubectl prints an applied object.
func resourceName(obj *unstructured.Unstructured) string {
	kind := strings.ToLower(obj.GetKind())
	if g := obj.GroupVersionKind().Group; g != "" {
		kind += "." + g
	}
	return kind + "/" + obj.GetName()
}
