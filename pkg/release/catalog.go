/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package release reads the release catalog: for each platform version, the image of
// every component and the versions it may be upgraded from. The catalog shipped in the
// binary (manifests/releases) can be extended from a directory, for air-gapped
// registries and for tests.
package release

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/manifests"
)

// Kind is the kind of a release catalog document.
const Kind = "Release"

// Release is the catalog entry of one platform version.
type Release struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Version of the platform, a semantic version.
	Version string `json:"version"`
	// UpgradeFrom is a semver constraint on the installed version that may upgrade
	// straight to this one, such as ">= 1.5.0, < 1.6.0". Empty allows any older version.
	UpgradeFrom string `json:"upgradeFrom,omitempty"`
	// Components maps a component name to its image.
	Components map[string]ComponentImage `json:"components"`
}

// ComponentImage is where a component's image comes from: a fully pinned Image
// (infrastructure), or a Name under the platform's image registry tagged with the
// platform version (the platform's own services).
type ComponentImage struct {
	Image string `json:"image,omitempty"`
	Name  string `json:"name,omitempty"`
	// Migration runs once, as a Job, before an upgrade to this version moves the
	// component (a schema change of its data).
	Migration *Migration `json:"migration,omitempty"`
}

// Migration is a component's data migration of one release: a Job with the
// component's pod (image, service account, configuration, security context) whose
// command and arguments are these.
type Migration struct {
	// Image of the Job; the component's image of this release when empty.
	Image string `json:"image,omitempty"`
	// Command and Args of the Job's container.
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// BackwardCompatible says the previous version runs on the migrated data, so a
	// failed upgrade may return the component by itself. When false, it is not
	// returned: the way out is forward (a fixed release) or a data restore.
	BackwardCompatible bool `json:"backwardCompatible"`
	// TimeoutSeconds bounds the Job (its activeDeadlineSeconds); 0 is 600.
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
}

// Catalog is a set of releases, by version.
type Catalog struct {
	releases map[string]Release
}

// Default returns the catalog compiled into the binary.
func Default() (*Catalog, error) {
	return Load(manifests.FS, manifests.ReleasesDir, "")
}

// Load reads every *.yaml release under dir of fsys, then every *.yaml under extraDir
// on disk when it is not empty; a release in extraDir replaces a shipped one of the
// same version.
func Load(fsys fs.FS, dir, extraDir string) (*Catalog, error) {
	c := &Catalog{releases: map[string]Release{}}
	if err := c.addDir(fsys, dir); err != nil {
		return nil, err
	}
	if extraDir != "" {
		if _, err := os.Stat(extraDir); err != nil {
			return nil, fmt.Errorf("release catalog directory: %w", err)
		}
		if err := c.addDir(os.DirFS(extraDir), "."); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Catalog) addDir(fsys fs.FS, dir string) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("read release catalog %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		p := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("read release %s: %w", p, err)
		}
		r, err := Parse(data)
		if err != nil {
			return fmt.Errorf("release %s: %w", p, err)
		}
		c.releases[r.Version] = r
	}
	return nil
}

// Parse decodes and checks one release document; unknown fields are errors.
func Parse(data []byte) (Release, error) {
	var r Release
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return Release{}, err
	}
	if r.Kind != Kind {
		return Release{}, fmt.Errorf("kind is %q, want %q", r.Kind, Kind)
	}
	if _, err := semver.StrictNewVersion(r.Version); err != nil {
		return Release{}, fmt.Errorf("version %q: %w", r.Version, err)
	}
	// The version is a label value and an image tag: no build metadata, 63 characters.
	if strings.Contains(r.Version, "+") || len(r.Version) > 63 {
		return Release{}, fmt.Errorf("version %q: build metadata (+...) and more than 63 characters are not allowed: it becomes a label and an image tag", r.Version)
	}
	if r.UpgradeFrom != "" {
		if _, err := semver.NewConstraint(r.UpgradeFrom); err != nil {
			return Release{}, fmt.Errorf("upgradeFrom %q: %w", r.UpgradeFrom, err)
		}
	}
	var errs []error
	for name, img := range r.Components {
		if (img.Image == "") == (img.Name == "") {
			errs = append(errs, fmt.Errorf("component %s: exactly one of image and name must be set", name))
		}
	}
	return r, errors.Join(errs...)
}

// Versions lists the catalog's versions, oldest first.
func (c *Catalog) Versions() []string {
	vs := make([]*semver.Version, 0, len(c.releases))
	for v := range c.releases {
		vs = append(vs, semver.MustParse(v))
	}
	sort.Sort(semver.Collection(vs))
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Original()
	}
	return out
}

// Get returns the release of version; the error lists the known versions.
func (c *Catalog) Get(version string) (Release, error) {
	r, ok := c.releases[version]
	if !ok {
		return Release{}, fmt.Errorf("version %q is not in the release catalog (known: %s)", version, strings.Join(c.Versions(), ", "))
	}
	return r, nil
}

// Image returns the image reference of component: override when set, else the pinned
// image, else registry/name:version. It fails when the release lacks the component.
func (r Release) Image(component, registry, override string) (string, error) {
	if override != "" {
		return override, nil
	}
	img, ok := r.Components[component]
	if !ok {
		return "", fmt.Errorf("release %s has no image for component %s", r.Version, component)
	}
	if img.Image != "" {
		return img.Image, nil
	}
	registry = strings.TrimSuffix(registry, "/")
	if registry == "" {
		return img.Name + ":" + r.Version, nil
	}
	return registry + "/" + img.Name + ":" + r.Version, nil
}

// CanUpgrade reports whether an installed version may move straight to r. The error
// says why not: a downgrade, the same version, or a jump outside r.UpgradeFrom.
func (r Release) CanUpgrade(installed string) error {
	from, err := semver.NewVersion(installed)
	if err != nil {
		return fmt.Errorf("installed version %q: %w", installed, err)
	}
	to := semver.MustParse(r.Version)
	switch {
	case to.LessThan(from):
		return fmt.Errorf("%s is older than the installed %s: downgrades are refused", r.Version, installed)
	case to.Equal(from):
		return fmt.Errorf("%s is already installed", installed)
	}
	if r.UpgradeFrom == "" {
		return nil
	}
	c, err := semver.NewConstraint(r.UpgradeFrom)
	if err != nil {
		return fmt.Errorf("release %s upgradeFrom: %w", r.Version, err)
	}
	if !c.Check(from) {
		return fmt.Errorf("upgrading from %s to %s is not supported (supported from %s)", installed, r.Version, r.UpgradeFrom)
	}
	return nil
}
