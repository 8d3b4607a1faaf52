/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// loadedPlatform is a validated platform with the release its version names and the
// user's patches.
type loadedPlatform struct {
	Platform *v1alpha1.OntoPlatform
	Release  release.Release
	Patches  []render.Patch
}

// loadPlatforms reads, defaults and validates every platform of filename, gives it
// its namespace and resolves its release. Nothing talks to a cluster.
func (g *GlobalOptions) loadPlatforms(files FileFlags) ([]loadedPlatform, error) {
	filename := files.Filename
	var patches []render.Patch
	for _, path := range files.PatchFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read patch file: %w", err)
		}
		ps, err := render.LoadPatches(path, data)
		if err != nil {
			return nil, err
		}
		patches = append(patches, ps...)
	}
	if files.WarnUnstoredPatches && len(files.PatchFiles) > 0 {
		warnUnstoredPatches(g.ErrOut, files.PatchFiles)
	}
	platforms, err := g.readPlatforms(filename)
	if err != nil {
		return nil, err
	}
	catalog, err := g.Catalog()
	if err != nil {
		return nil, err
	}
	out := make([]loadedPlatform, 0, len(platforms))
	for _, p := range platforms {
		rel, err := catalog.Get(p.Spec.Version)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", p.Namespace, p.Name, err)
		}
		out = append(out, loadedPlatform{Platform: p, Release: rel, Patches: patches})
	}
	return out, nil
}

// warnUnstoredPatches tells the user that --patch files change this run only: the
// platform stores its spec, not them, so a teammate's apply, an upgrade, a rollback
// or the reconciler renders without them and reverts what they changed.
func warnUnstoredPatches(w io.Writer, paths []string) {
	fmt.Fprintf(w, "Warning: the patches of --patch (%s) apply to this run only and are not stored with the platform; "+
		"the next apply without them reverts their changes. To keep a patch, add it to spec.patches.\n", strings.Join(paths, ", "))
}

// loadPlatform is loadPlatforms for commands that act on exactly one platform.
func (g *GlobalOptions) loadPlatform(files FileFlags) (loadedPlatform, error) {
	all, err := g.loadPlatforms(files)
	if err != nil {
		return loadedPlatform{}, err
	}
	if len(all) != 1 {
		return loadedPlatform{}, fmt.Errorf("%s holds %d OntoPlatforms; this command takes exactly one", files.Filename, len(all))
	}
	return all[0], nil
}

// render renders lp with the release it names.
func (lp loadedPlatform) render() ([]render.Plane, error) {
	return render.Render(lp.Platform, render.Options{Release: lp.Release, Patches: lp.Patches})
}

// readPlatforms reads, defaults and validates every platform of filename and gives
// those whose file names no namespace the one kubectl would use, refusing a file that
// names another namespace than -n. It returns a *spec.Error when the file is invalid.
func (g *GlobalOptions) readPlatforms(filename string) ([]*v1alpha1.OntoPlatform, error) {
	v, err := g.Validator()
	if err != nil {
		return nil, err
	}
	platforms, err := v.LoadFile(filename, g.In)
	if err != nil {
		return nil, err
	}
	def, err := g.namespaceDefault(platforms)
	if err != nil {
		return nil, err
	}
	if err := spec.SetNamespaces(inputName(filename), platforms, def); err != nil {
		return nil, err
	}
	return platforms, nil
}

// namespaceDefault is the namespace for platforms whose file names none: -n, else the
// kubeconfig context's, else "default". The kubeconfig is read only when a platform
// needs it, so that validate and render of a file naming its namespace work whatever
// the kubeconfig holds, even a broken one.
func (g *GlobalOptions) namespaceDefault(platforms []*v1alpha1.OntoPlatform) (spec.NamespaceDefault, error) {
	// -n is read from the flag itself: ToRawKubeConfigLoader would load the kubeconfig
	// files first, and fail on a missing --kubeconfig, before honouring it.
	if ns := *g.ConfigFlags.Namespace; ns != "" {
		return spec.NamespaceDefault{Namespace: ns, Explicit: true}, nil
	}
	if !slices.ContainsFunc(platforms, func(p *v1alpha1.OntoPlatform) bool { return p.Namespace == "" }) {
		return spec.NamespaceDefault{}, nil
	}
	ns, err := g.currentNamespace()
	if err != nil {
		return spec.NamespaceDefault{}, err
	}
	return spec.NamespaceDefault{Namespace: ns}, nil
}

// inputName is how errors name the platform file.
func inputName(filename string) string {
	if filename == "-" {
		return spec.StdinName
	}
	return filename
}
