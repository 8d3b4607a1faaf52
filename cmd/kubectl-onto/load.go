/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"os"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// loadedPlatform is a validated platform with the release its version names and the
// user's patches.
type loadedPlatform struct {
	Platform *v1alpha1.OntoPlatform
	Release  release.Release
	Patches  []render.Patch
}

// loadPlatforms reads, defaults and validates every platform of filename and resolves
// its release. Nothing talks to a cluster.
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
	v, err := g.Validator()
	if err != nil {
		return nil, err
	}
	platforms, err := v.LoadFile(filename, g.In)
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
