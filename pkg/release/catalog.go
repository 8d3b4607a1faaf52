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
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
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
	// Components maps a component name to its image and, for a platform service, the
	// backing services it uses.
	Components map[string]ComponentImage `json:"components"`
}

// ComponentImage is where a component's image comes from: a fully pinned Image
// (infrastructure), or a Name under the platform's image registry tagged with the
// platform version (the platform's own services).
type ComponentImage struct {
	Image string `json:"image,omitempty"`
	Name  string `json:"name,omitempty"`
	// Uses names the backing services a platform service talks to (postgres, redis,
	// kafka, minio): render gives it the credentials and addresses of those, when
	// enabled, and of no other. Required on every platform service, [] for none (the
	// gateway), so a new service cannot receive every credential by omission; not
	// allowed on infrastructure. omitzero, not omitempty: an empty list must survive a
	// revision snapshot's JSON round trip, where omitempty would drop it.
	Uses []string `json:"uses,omitzero"`
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
	for _, name := range sortedNames(r.Components) {
		img := r.Components[name]
		if (img.Image == "") == (img.Name == "") {
			errs = append(errs, fmt.Errorf("component %s: exactly one of image and name must be set", name))
		}
		errs = append(errs, checkUses(name, img.Uses)...)
	}
	return r, errors.Join(errs...)
}

// checkUses checks a component's uses: present on every platform service, naming only
// backing services, each once; absent on infrastructure, which connects to nothing of
// the platform's. Names the spec does not know (redis-sentinel, a newer release's
// components) are never rendered by this binary, so they are not checked.
func checkUses(component string, uses []string) []error {
	c, known := (&v1alpha1.OntoPlatformSpec{}).Component(component)
	if !known {
		return nil
	}
	if c.Service == nil {
		if uses != nil {
			return []error{fmt.Errorf("component %s: uses is only for platform services, not infrastructure", component)}
		}
		return nil
	}
	if uses == nil {
		return []error{fmt.Errorf("component %s: uses is missing: list the backing services it uses (%s), or [] for none", component, strings.Join(BackingServices(), ", "))}
	}
	var errs []error
	seen := map[string]bool{}
	for _, u := range uses {
		switch {
		case !slices.Contains(BackingServices(), u):
			errs = append(errs, fmt.Errorf("component %s: uses %q, which is not a backing service (%s)", component, u, strings.Join(BackingServices(), ", ")))
		case seen[u]:
			errs = append(errs, fmt.Errorf("component %s: uses %q twice", component, u))
		}
		seen[u] = true
	}
	return errs
}

// BackingServices are the infrastructure components a platform service may use, in
// install order.
func BackingServices() []string {
	return []string{v1alpha1.ComponentPostgres, v1alpha1.ComponentRedis, v1alpha1.ComponentMinio, v1alpha1.ComponentKafka}
}

// Uses returns the backing services component uses, by its catalog entry. It fails
// when the release has no entry for it, or an entry without uses: a release read from
// a revision snapshot recorded before the catalog named them.
func (r Release) Uses(component string) ([]string, error) {
	img, ok := r.Components[component]
	if !ok {
		return nil, fmt.Errorf("release %s has no entry for component %s", r.Version, component)
	}
	if img.Uses == nil {
		return nil, fmt.Errorf("release %s names no uses for component %s", r.Version, component)
	}
	return img.Uses, nil
}

func sortedNames(m map[string]ComponentImage) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
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

// FillUses returns r with the uses of every entry that lacks them taken from the same
// version's entry in c. A release read from a revision snapshot recorded before the
// catalog named uses has none, and could not render (an upgrade from that revision, a
// rollback to it, doctor's drift check); its version's shipped entry says what its
// services use. Entries c does not know stay as they are, and fail to render with an
// error naming them.
func (c *Catalog) FillUses(r Release) Release {
	known, ok := c.releases[r.Version]
	if !ok {
		return r
	}
	var filled map[string]ComponentImage
	for name, img := range r.Components {
		if img.Uses != nil || known.Components[name].Uses == nil {
			continue
		}
		if filled == nil {
			// A copy: r's map may be shared with the caller's.
			filled = make(map[string]ComponentImage, len(r.Components))
			for k, v := range r.Components {
				filled[k] = v
			}
		}
		img.Uses = slices.Clone(known.Components[name].Uses)
		filled[name] = img
	}
	if filled != nil {
		r.Components = filled
	}
	return r
}
