/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/platform"
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
