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
// in-memory filesystem and builds them with krusty, the library behind `kustomize build`;
// the caller's own kustomize patches apply last, so anything can be changed.
//
// Render is pure: the same platform, release and patches always give the same objects,
// in the same order, byte for byte. It reads nothing but the embedded bases, and uses no
// clock and no randomness; Secrets carry no values (apply generates them in the cluster).
package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"sigs.k8s.io/yaml"
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
	// Patches are the user's kustomize patches, applied in order after everything the
	// spec renders: the escape hatch for what the spec cannot express.
	Patches []Patch
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
		return nil, fmt.Errorf("render platform %s: release %q does not match spec.version %q", p.Name, opts.Release.Version, p.Spec.Version)
	}
	b := &builder{p: p, spec: &p.Spec, rel: opts.Release}
	overlays, err := b.overlays()
	if err != nil {
		return nil, fmt.Errorf("render platform %s: %w", p.Name, err)
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
	if len(opts.Patches) > 0 {
		var err error
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		if objs, err = applyPatches(k, fsys, p.Namespace, objs, opts.Patches); err != nil {
			return nil, fmt.Errorf("render platform %s: %w", p.Name, err)
		}
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

// applyPatches builds every rendered object once more with the user's patches. An
// object keeps the plane it was rendered in; one a patch renames or adds is placed by
// its app.kubernetes.io/component label.
func applyPatches(k *krusty.Kustomizer, fsys filesys.FileSystem, namespace string, objs []planeObject, patches []Patch) ([]planeObject, error) {
	dir := path.Join(fsRoot, "user-patches")
	var stream bytes.Buffer
	planeOf := make(map[objectKey]v1alpha1.Plane, len(objs))
	for _, po := range objs {
		data, err := yaml.Marshal(po.obj.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", po.obj.GetKind(), po.obj.GetName(), err)
		}
		stream.WriteString("---\n")
		stream.Write(data)
		planeOf[keyOf(po.obj)] = po.plane
	}
	if err := fsys.WriteFile(path.Join(dir, "objects.yaml"), stream.Bytes()); err != nil {
		return nil, fmt.Errorf("user patches: %w", err)
	}
	kz := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"objects.yaml"},
	}
	for i, up := range patches {
		if strings.TrimSpace(up.Patch) == "" {
			return nil, fmt.Errorf("user patch %d is empty", i)
		}
		kp := types.Patch{Patch: up.Patch}
		t := up.Target
		if t == nil {
			var err error
			if t, err = targetOf(up.Patch); err != nil {
				return nil, fmt.Errorf("user patch %d: %w", i, err)
			}
			// A derived target that matches nothing would be a silent no-op; a typo in
			// the name must fail instead, as kustomize fails an unmatched patch.
			if _, ok := planeOf[objectKey{group: t.Group, kind: t.Kind, name: t.name}]; !ok {
				return nil, fmt.Errorf("user patch %d: the platform renders no %s %s", i, t.Kind, t.name)
			}
		}
		if t != nil {
			kp.Target = &types.Selector{
				ResId: resid.ResId{
					Gvk:       resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind},
					Name:      t.Name,
					Namespace: t.Namespace,
				},
				LabelSelector:      t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector,
			}
		}
		kz.Patches = append(kz.Patches, kp)
	}
	if err := writeYAML(fsys, path.Join(dir, "kustomization.yaml"), kz); err != nil {
		return nil, fmt.Errorf("user patches: %w", err)
	}
	built, err := build(k, fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("user patches: %w", err)
	}
	if err := rehashConfigMaps(objs, built); err != nil {
		return nil, fmt.Errorf("user patches: %w", err)
	}
	out := make([]planeObject, 0, len(built))
	for _, u := range built {
		pl, ok := planeOf[keyOf(u)]
		if !ok {
			pl = v1alpha1.Plane(u.GetLabels()[LabelComponent])
			if !slices.Contains(v1alpha1.Planes(), pl) {
				return nil, fmt.Errorf("user patches: %s %s: not rendered by the spec, and its label %s=%q names no plane", u.GetKind(), u.GetName(), LabelComponent, pl)
			}
		}
		out = append(out, planeObject{plane: pl, obj: u})
	}
	return out, nil
}

// targetOf selects the object a strategic-merge patch names. Kustomize matches an
// untargeted patch on its namespace too, and users rarely write the namespace (the spec
// decides it), so the patch gets an explicit target by group, version, kind and name.
func targetOf(patch string) (*PatchTarget, error) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(patch), &obj); err != nil {
		return nil, fmt.Errorf("a patch without a target must be a strategic-merge patch naming its object (a JSON 6902 patch needs a target): %w", err)
	}
	if obj.Kind == "" || obj.Metadata.Name == "" {
		return nil, errors.New("a strategic-merge patch without a target must set kind and metadata.name")
	}
	group, version := "", obj.APIVersion
	if i := strings.LastIndex(obj.APIVersion, "/"); i >= 0 {
		group, version = obj.APIVersion[:i], obj.APIVersion[i+1:]
	}
	return &PatchTarget{
		Group: group, Version: version, Kind: obj.Kind,
		Name: "^" + regexp.QuoteMeta(obj.Metadata.Name) + "$", Namespace: obj.Metadata.Namespace,
		name: obj.Metadata.Name,
	}, nil
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

// toJSON marshals values built by this package from plain maps, slices and API types,
// which cannot fail to marshal; a failure is a bug, reported as an error all the same.
func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
