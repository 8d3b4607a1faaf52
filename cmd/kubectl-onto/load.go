/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// loader reads platform files for this command: the validator and catalog of this
// process, -n, and the kubeconfig context's namespace when a file names none.
func (g *GlobalOptions) loader() (*platform.Loader, error) {
	v, err := g.Validator()
	if err != nil {
		return nil, err
	}
	catalog, err := g.Catalog()
	if err != nil {
		return nil, err
	}
	// -n is read from the flag itself: ToRawKubeConfigLoader would load the kubeconfig
	// files first, and fail on a missing --kubeconfig, before honouring it.
	return &platform.Loader{Validator: v, Catalog: catalog, Namespace: *g.ConfigFlags.Namespace,
		ContextNamespace: g.currentNamespace, Stdin: g.In}, nil
}

// loadPlatforms reads, defaults and validates every platform of the file, gives it its
// namespace and resolves its release, with the --patch patches. Nothing talks to a
// cluster.
func (g *GlobalOptions) loadPlatforms(files FileFlags) ([]platform.Loaded, error) {
	patches, err := platform.ReadPatchFiles(files.PatchFiles)
	if err != nil {
		return nil, err
	}
	if files.WarnUnstoredPatches && len(files.PatchFiles) > 0 {
		warnUnstoredPatches(g.ErrOut, files.PatchFiles)
	}
	l, err := g.loader()
	if err != nil {
		return nil, err
	}
	l.Recursive = files.Recursive
	loaded, err := l.Load(files.Filename, patches)
	if err != nil {
		return nil, err
	}
	render := g.renderer()
	for i, lp := range loaded {
		loaded[i].Renderer = render
		for _, w := range spec.Warnings(lp.Platform) {
			fmt.Fprintf(g.ErrOut, "Warning: OntoPlatform %s/%s: %s: %s\n", lp.Platform.Namespace, lp.Platform.Name, w.Field, w.Message)
		}
	}
	return loaded, nil
}

// warnUnstoredPatches tells the user that --patch files change this run only: the
// platform stores its spec, not them, so a teammate's apply, an upgrade, a rollback
// or the reconciler renders without them and reverts what they changed.
func warnUnstoredPatches(w io.Writer, paths []string) {
	fmt.Fprintf(w, "Warning: the patches of --patch (%s) apply to this run only and are not stored with the platform; "+
		"the next apply without them reverts their changes. To keep a patch, add it to spec.patches.\n", strings.Join(paths, ", "))
}

// loadPlatform is loadPlatforms for commands that act on exactly one platform.
func (g *GlobalOptions) loadPlatform(files FileFlags) (platform.Loaded, error) {
	all, err := g.loadPlatforms(files)
	if err != nil {
		return platform.Loaded{}, err
	}
	if len(all) != 1 {
		return platform.Loaded{}, fmt.Errorf("%s holds %d OntoPlatforms; this command takes exactly one", platform.InputName(files.Filename), len(all))
	}
	return all[0], nil
}

// livePlatform is the installed OntoPlatform of lp, nil when there is none; one GET.
func livePlatform(ctx context.Context, clients *kube.Clients, lp *platform.Loaded) (*v1alpha1.OntoPlatform, error) {
	l := &inventory.Lister{Dynamic: clients.Dynamic, Mapper: clients.Mapper}
	obj, err := l.Parent(ctx, lp.Platform.Namespace, lp.Platform.Name)
	var notFound *inventory.NotFoundError
	if errors.As(err, &notFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var live v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &live); err != nil {
		return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return &live, nil
}

// keepRemediations gives lp the live platform's status.remediations, the memory limits
// the watch raised after OOM kills, so that applying an unchanged file does not take
// them back; none when the platform does not exist (live nil). Each one the render
// keeps is noted on w with the spec field to copy it into.
func keepRemediations(live *v1alpha1.OntoPlatform, lp *platform.Loaded, w io.Writer) {
	if live == nil {
		return
	}
	lp.Remediations = live.Status.Remediations
	kept := map[string]bool{}
	for _, k := range lp.Kept() {
		kept[k.Component+"/"+k.Container] = true
		spec := "spec sets none"
		if k.SpecLimit != "" {
			spec = "spec says " + k.SpecLimit
		}
		fmt.Fprintf(w, "note: %s's memory limit is %s, raised by the watch after an OOM kill (%s): copy it into %s\n",
			k.Component, k.To, spec, k.SpecPath)
	}
	for _, r := range lp.Remediations {
		if kept[r.Component+"/"+r.Container] {
			continue
		}
		// Said when the file wins below the raise; a file as high needs no word.
		var why string
		q, ok := render.MemoryLimit(lp.Platform, r.Component)
		to, err := resource.ParseQuantity(r.To)
		switch {
		case ok && err == nil && q.Cmp(to) >= 0:
		case !lp.Platform.Spec.Remediation.Memory.Enabled:
			why = "spec.remediation.memory.enabled is false"
		case ok && r.SpecLimit != "" && q.String() != r.SpecLimit:
			why = fmt.Sprintf("the file sets %s where it said %s when the watch raised it", q.String(), r.SpecLimit)
		}
		if why != "" {
			fmt.Fprintf(w, "note: %s's memory limit goes back to the file's, not the %s the watch raised it to: %s\n", r.Component, r.To, why)
		}
	}
}
