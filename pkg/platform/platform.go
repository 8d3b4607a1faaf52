/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package platform is the offline half of every command that acts on a platform file:
// file → typed spec (defaults, validation, namespace) → release entry → rendered
// planes → what apply writes (plan.Desired). It talks to no cluster. The CLI's plan,
// apply, render and validate share it, and so will upgrade, doctor and the reconciler.
package platform

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// Loader reads platform files.
type Loader struct {
	Validator *spec.Validator
	Catalog   *release.Catalog
	// Namespace is the one the user asked for (kubectl's -n): platforms whose file names
	// none go there, and a file naming another is refused. Empty when not given.
	Namespace string
	// ContextNamespace gives the namespace of platforms whose file names none when
	// Namespace is empty (the kubeconfig context's). It is called only when a platform
	// needs it, so files that name their namespace load without a kubeconfig. nil
	// means "default", as kubectl.
	ContextNamespace func() (string, error)
	// Stdin is read for the file name "-".
	Stdin io.Reader
	// Recursive makes Load read the directories under a directory too, as kubectl's
	// -R; without it only the directory's own files are read.
	Recursive bool
}

// Loaded is one validated platform with the release its version names and the
// one-off patches (--patch) of this run.
type Loaded struct {
	Platform *v1alpha1.OntoPlatform
	Release  release.Release
	// Patches apply after spec.patches, to this run only.
	Patches []render.Patch
	// Remediations are the live platform's status.remediations: the memory limits the
	// watch raised. Each renders while above the limit the spec renders (Kept).
	Remediations []v1alpha1.Remediation
	// Source is the file and document the platform was read from, to place at their
	// lines the issues CheckTransition finds; zero for a platform not read from a file.
	Source spec.Source
	// Renderer renders the platform: render.Render when nil, or the same through a
	// cache (pkg/rendercache).
	Renderer func(*v1alpha1.OntoPlatform, render.Options) ([]render.Plane, error)
}

// CheckTransition refuses, before any write, a spec the live platform cannot become
// without breaking its running cluster (spec.CheckTransition: the CRD's transition
// rules), as a *spec.Error at the file's lines. live nil (not installed) passes.
func (lp Loaded) CheckTransition(live *v1alpha1.OntoPlatform) error {
	if live == nil {
		return nil
	}
	return lp.Source.Error(spec.CheckTransition(&live.Spec, &lp.Platform.Spec))
}

// KeptRemediation is a remediation the render applies: the spec renders a lower limit.
type KeptRemediation struct {
	v1alpha1.Remediation
	// SpecLimit is the limit the spec renders, empty when it sets none.
	SpecLimit string
	// SpecPath is the spec field to copy To into, such as
	// "spec.gateway.resources.limits.memory".
	SpecPath string
}

// Kept are the remediations the render applies: those of memory whose To is above
// the limit the spec renders. The file wins over a remediation, which is then
// dropped, once:
//   - the spec's own limit is as high;
//   - the spec renders another limit than when the watch raised it (SpecLimit): the
//     file changed the limit, lower or higher;
//   - spec.remediation.memory.enabled is false: remediation turned off.
func (lp Loaded) Kept() []KeptRemediation {
	if !lp.Platform.Spec.Remediation.Memory.Enabled {
		return nil
	}
	var out []KeptRemediation
	for _, r := range lp.Remediations {
		if r.Resource != "" && r.Resource != "memory" {
			continue
		}
		to, err := resource.ParseQuantity(r.To)
		if err != nil {
			continue
		}
		k := KeptRemediation{Remediation: r, SpecPath: "spec." + r.Component + ".resources.limits.memory"}
		if c, ok := lp.Platform.Spec.Component(r.Component); ok {
			k.SpecPath = c.SpecPath + ".resources.limits.memory"
		}
		if spec, ok := render.MemoryLimit(lp.Platform, r.Component); ok {
			if to.Cmp(spec) <= 0 {
				continue
			}
			if was, err := resource.ParseQuantity(r.SpecLimit); err == nil && was.Cmp(spec) != 0 {
				continue // the file set another limit since the raise
			}
			k.SpecLimit = spec.String()
		}
		out = append(out, k)
	}
	return out
}

// memoryLimits are the render overrides of the kept remediations.
func (lp Loaded) memoryLimits() map[string]resource.Quantity {
	kept := lp.Kept()
	if len(kept) == 0 {
		return nil
	}
	out := make(map[string]resource.Quantity, len(kept))
	for _, k := range kept {
		out[k.Component] = resource.MustParse(k.To)
	}
	return out
}

// Read reads, defaults and validates every platform of file and gives those that name
// no namespace the default one, refusing a file that names another namespace than an
// explicit default. It returns a *spec.Error when the file is invalid.
func (l *Loader) Read(file string) ([]*v1alpha1.OntoPlatform, error) {
	platforms, _, err := l.read(file)
	return platforms, err
}

// read is Read, plus where each platform came from.
func (l *Loader) read(file string) ([]*v1alpha1.OntoPlatform, []spec.Source, error) {
	platforms, sources, err := l.Validator.LoadFileSources(file, l.Stdin)
	if err != nil {
		return nil, nil, err
	}
	var def spec.NamespaceDefault
	switch {
	case l.Namespace != "":
		def = spec.NamespaceDefault{Namespace: l.Namespace, Explicit: true}
	case needsNamespace(platforms):
		def.Namespace = "default"
		if l.ContextNamespace != nil {
			if def.Namespace, err = l.ContextNamespace(); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := spec.SetNamespaces(InputName(file), platforms, def); err != nil {
		return nil, nil, err
	}
	return platforms, sources, nil
}

func needsNamespace(platforms []*v1alpha1.OntoPlatform) bool {
	for _, p := range platforms {
		if p.Namespace == "" {
			return true
		}
	}
	return false
}

// Load is Read, plus each platform's release entry; patches are the run's one-off
// patches. file may also be a directory: its *.yaml, *.yml and *.json files are read
// in name order (Recursive: those of its subdirectories too), every file is checked
// before any platform is returned, and the errors of all files are returned at once,
// each naming its file. Two platforms of the same name, or in the same namespace (one
// namespace holds one platform), are refused.
func (l *Loader) Load(file string, patches []render.Patch) ([]Loaded, error) {
	platforms, sources, err := l.readAll(file)
	if err != nil {
		return nil, err
	}
	if err := distinctNamespaces(platforms); err != nil {
		return nil, err
	}
	out := make([]Loaded, 0, len(platforms))
	for i, p := range platforms {
		rel, err := l.Catalog.Get(p.Spec.Version)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", p.Namespace, p.Name, err)
		}
		out = append(out, Loaded{Platform: p, Release: rel, Patches: patches, Source: sources[i]})
	}
	return out, nil
}

// LoadOne is Load for commands that act on exactly one platform.
func (l *Loader) LoadOne(file string, patches []render.Patch) (Loaded, error) {
	all, err := l.Load(file, patches)
	if err != nil {
		return Loaded{}, err
	}
	if len(all) != 1 {
		return Loaded{}, fmt.Errorf("%s holds %d OntoPlatforms; this command takes exactly one", InputName(file), len(all))
	}
	return all[0], nil
}

// ReadPatchFiles reads --patch files.
func ReadPatchFiles(paths []string) ([]render.Patch, error) {
	var out []render.Patch
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read patch file: %w", err)
		}
		ps, err := render.LoadPatches(path, data)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// Render renders the platform with its release and patches.
func (lp Loaded) Render() ([]render.Plane, error) {
	// render's errors name the platform already.
	opts := render.Options{Release: lp.Release, Patches: lp.Patches, MemoryLimits: lp.memoryLimits()}
	if lp.Renderer != nil {
		return lp.Renderer(lp.Platform, opts)
	}
	return render.Render(lp.Platform, opts)
}

// Desired is everything applying the platform writes.
func (lp Loaded) Desired() (*plan.Desired, error) {
	planes, err := lp.Render()
	if err != nil {
		return nil, err
	}
	return plan.NewDesired(lp.Platform, planes)
}

// InputName is how errors name a platform file.
func InputName(file string) string {
	if file == "-" {
		return spec.StdinName
	}
	return file
}
