/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package render turns a validated, defaulted OntoPlatform into every Kubernetes object
// of the platform, grouped by plane in install order.
//
// The shape of each workload lives in kustomize bases compiled into the binary
// (manifests/base). Render writes those bases and overlays generated from the spec
// (names, images, replicas, resources, configuration, placement, HPA, PDB, Ingress) to an
// in-memory filesystem and builds them with krusty, the library behind `kustomize build`,
// then patches what each overlay built with the overlay's own patches, which name list
// items by merge key (objPatch); the platform's own kustomize patches (spec.patches),
// then a run's one-off ones, apply last, so anything can be changed.
//
// Render is pure: the same platform, release and patches always give the same objects,
// in the same order, byte for byte. It reads nothing but the embedded bases, and uses no
// clock and no randomness; Secrets carry no values (apply generates them in the cluster).
package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// Plane is the rendered objects of one plane, in apply order.
type Plane struct {
	Name    v1alpha1.Plane               `json:"name"`
	Objects []*unstructured.Unstructured `json:"objects"`
}

// Options are the inputs of Render besides the platform.
type Options struct {
	// Release is the catalog entry of the platform's spec.version; it gives the images.
	Release release.Release
	// Patches are one-off kustomize patches (`--patch`), applied in order after
	// everything the spec renders, spec.patches included: the escape hatch of one run.
	// Patches to keep belong in spec.patches, which Render applies on its own.
	Patches []Patch
	// MemoryLimits override, by component name, the memory limit of the component's
	// main container (its requests stay as the spec has them): the limits the watch
	// raised after OOM kills (status.remediations). Applied before the patches.
	MemoryLimits map[string]resource.Quantity
}

// Patch is a kustomize patch: a strategic-merge patch (a partial object that names its
// kind and name) or a JSON 6902 patch (a list of operations, which needs a Target). Its
// JSON form is the one of an entry of a kustomization's `patches`, so a CLI can decode
// a user's patch list as is.
type Patch struct {
	// Patch is the patch document, YAML or JSON.
	Patch string `json:"patch"`
	// Target selects the objects to patch; a strategic-merge patch without a Target
	// patches the object it names.
	Target *PatchTarget `json:"target,omitempty"`
}

// PatchTarget selects objects by group, version, kind, name (a regular expression),
// namespace, and label or annotation selectors, as a kustomize patch target does.
type PatchTarget struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`

	// name is the literal name of a target derived from a strategic-merge patch.
	name string
}

// Renderer renders platforms. It holds the embedded bases, read once, so rendering many
// platforms (the reconciler, benchmarks) does not walk the embedded filesystem each time.
// A Renderer is safe for concurrent use.
type Renderer struct {
	bases []file
}

// file is one file of the in-memory kustomize tree.
type file struct {
	path string
	data []byte
}

// fsRoot is where the generated overlays live in the in-memory filesystem, one directory
// each; the bases sit beside it under /base.
const fsRoot = "/platform"

// NewRenderer reads the kustomize bases compiled into the binary.
func NewRenderer() (*Renderer, error) {
	return newRenderer(manifests.FS, manifests.BaseDir)
}

func newRenderer(fsys fs.FS, dir string) (*Renderer, error) {
	r := &Renderer{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".yaml" {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := p[len(dir):]
		r.bases = append(r.bases, file{path: "/base" + rel, data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read kustomize bases: %w", err)
	}
	return r, nil
}

// Render returns every object of p, by plane in install order (planes with no objects
// are omitted). Pure: no I/O beyond the embedded bases, no clock, no randomness. It is a
// convenience over NewRenderer and (*Renderer).Render.
func Render(p *v1alpha1.OntoPlatform, opts Options) ([]Plane, error) {
	r, err := NewRenderer()
	if err != nil {
		return nil, err
	}
	return r.Render(p, opts)
}

// Render returns every object of p, by plane in install order (planes with no objects
// are omitted). p must be validated and defaulted (pkg/spec); Render does not change it.
func (r *Renderer) Render(p *v1alpha1.OntoPlatform, opts Options) ([]Plane, error) {
	if p == nil {
		return nil, errors.New("render: no platform")
	}
	if p.Name == "" || p.Namespace == "" {
		return nil, fmt.Errorf("render platform %q: metadata.name and metadata.namespace are required", p.Name)
	}
	if opts.Release.Version != p.Spec.Version {
		return nil, fmt.Errorf("render platform %s/%s: release %q does not match spec.version %q", p.Namespace, p.Name, opts.Release.Version, p.Spec.Version)
	}
	b := &builder{p: p, spec: &p.Spec, rel: opts.Release, memory: opts.MemoryLimits}
	overlays, err := b.overlays()
	if err != nil {
		return nil, fmt.Errorf("render platform %s/%s: %w", p.Namespace, p.Name, err)
	}

	fsys := filesys.MakeFsInMemory()
	for _, f := range r.bases {
		if err := fsys.WriteFile(f.path, f.data); err != nil {
			return nil, fmt.Errorf("render platform %s: write base %s: %w", p.Name, f.path, err)
		}
	}
	// Each overlay builds on its own: the services share one base, and kustomize cannot
	// tell their renamed objects apart when resolving references across overlays. The
	// builds are independent, so they run in parallel; results keep overlay order.
	for _, o := range overlays {
		o.k.Namespace = p.Namespace
		if err := o.write(fsys, path.Join(fsRoot, o.dir)); err != nil {
			return nil, fmt.Errorf("render platform %s: %s: %w", p.Name, o.dir, err)
		}
	}
	built := make([][]*unstructured.Unstructured, len(overlays))
	errs := make([]error, len(overlays))
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	var wg sync.WaitGroup
	for i, o := range overlays {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			built[i], errs[i] = build(krusty.MakeKustomizer(krusty.MakeDefaultOptions()), fsys, path.Join(fsRoot, o.dir))
			if errs[i] == nil {
				errs[i] = o.applyPatches(built[i])
			}
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", o.dir, errs[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("render platform %s: %w", p.Name, err)
	}
	var objs []planeObject
	for i, o := range overlays {
		for _, u := range built[i] {
			objs = append(objs, planeObject{plane: o.plane, obj: u})
		}
	}
	if patches := allPatches(p.Spec.Patches, opts.Patches); len(patches) > 0 {
		var err error
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		if objs, err = applyPatches(k, fsys, objs, patches); err != nil {
			return nil, fmt.Errorf("render platform %s: %w", p.Name, err)
		}
	}
	if err := nameJobsByContent(objs); err != nil {
		return nil, fmt.Errorf("render platform %s: %w", p.Name, err)
	}
	for _, o := range objs {
		completeAtomicDefaults(o.obj)
	}
	return groupByPlane(objs), nil
}

// build runs kustomize on dir and returns its objects as unstructured, through JSON so
// numbers are int64 as apimachinery expects.
func build(k *krusty.Kustomizer, fsys filesys.FileSystem, dir string) ([]*unstructured.Unstructured, error) {
	resMap, err := k.Run(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, res := range resMap.Resources() {
		// Decoding the YAML node tree straight to maps skips the text round trip of
		// MarshalJSON (YAML encode, parse, JSON encode, parse): a seventh of a render.
		m, err := res.Map()
		if err == nil {
			if v, ok := jsonValue(m); ok {
				objs = append(objs, &unstructured.Unstructured{Object: v.(map[string]any)})
				continue
			}
		}
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", res.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", res.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// jsonValue converts, in place, a value decoded from YAML to the types JSON decoding
// gives and apimachinery expects (int64 for integers); ok is false for anything
// else (a YAML timestamp, a binary), which the caller then takes through JSON.
func jsonValue(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			c, ok := jsonValue(child)
			if !ok {
				return nil, false
			}
			t[k] = c
		}
		return t, true
	case []any:
		for i, child := range t {
			c, ok := jsonValue(child)
			if !ok {
				return nil, false
			}
			t[i] = c
		}
		return t, true
	case int:
		return int64(t), true
	case int64, float64, string, bool, nil:
		return t, true
	default:
		return nil, false
	}
}

// Objects flattens planes into one list, in install order.
func Objects(planes []Plane) []*unstructured.Unstructured {
	n := 0
	for _, pl := range planes {
		n += len(pl.Objects)
	}
	out := make([]*unstructured.Unstructured, 0, n)
	for _, pl := range planes {
		out = append(out, pl.Objects...)
	}
	return out
}
