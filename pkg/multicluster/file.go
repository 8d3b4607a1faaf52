/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package multicluster deploys one platform to many clusters in ordered waves: a
// fleet file names the platform file(s), the clusters by kubeconfig context grouped
// into waves, and per-cluster patches; Run goes wave by wave, the clusters of a wave
// side by side, and stops at the first wave with more failures than the fleet allows.
// Runner orders, gates and reports; the work on one cluster is the caller's function:
// ClusterRun's Apply or Upgrade (apply and upgrade --fleet, each cluster's platforms
// in turn, each gated by doctor), or the caller's own (plan). The state a re-run
// resumes from lives in the clusters' own OntoPlatform statuses, not here.
// (pkg/parallel, by contrast, runs one action over several platforms of one cluster;
// Run uses it within a wave.)
package multicluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// APIVersion and Kind of a fleet file. It is read by the CLI only, never sent to a
// cluster; the apiVersion leaves room to change its shape.
const (
	APIVersion = "onto.paas/v1alpha1"
	Kind       = "Fleet"
)

// File is a fleet file: which platform goes to which clusters, in which order.
//
//	apiVersion: onto.paas/v1alpha1
//	kind: Fleet
//	platforms: [platform.yaml]
//	maxFailures: 0
//	waves:
//	- name: canary
//	  clusters: [{context: dev}]
//	- name: production
//	  maxParallel: 2
//	  clusters:
//	  - context: prod-eu
//	  - context: prod-us
//	    patches: [{patch: ..., target: {...}}]
type File struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Platforms are the platform files (or directories) every cluster gets, relative
	// to the fleet file's directory.
	Platforms []string `json:"platforms"`
	// MaxFailures is how many clusters may fail before the fleet stops: with the
	// default 0 the first failure stops it at the end of its wave, and the later
	// waves are not touched.
	MaxFailures int `json:"maxFailures,omitempty"`
	// Waves run in order; a wave starts once every cluster of the one before passed.
	Waves []Wave `json:"waves"`
}

// Wave is a group of clusters that run side by side.
type Wave struct {
	// Name says what the wave is (canary, staging, production).
	Name string `json:"name"`
	// MaxParallel is how many of its clusters run at once; 0 runs them all at once.
	MaxParallel int `json:"maxParallel,omitempty"`
	// Clusters of the wave, by kubeconfig context.
	Clusters []Cluster `json:"clusters"`
}

// Cluster is one cluster of a wave.
type Cluster struct {
	// Context is the kubeconfig context: the cluster's server and credentials come
	// from it alone.
	Context string `json:"context"`
	// Name is how the output names the cluster; the context when empty.
	Name string `json:"name,omitempty"`
	// Patches are kustomize patches for this cluster only, with the shape of
	// spec.patches; they are stored with the cluster's platform, after the file's own.
	Patches []v1alpha1.Patch `json:"patches,omitempty"`
}

// DisplayName is Name, else Context.
func (c Cluster) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Context
}

// Fleet is a validated fleet file.
type Fleet struct {
	File
	// Path is the fleet file, as given.
	Path string
	// PlatformPaths are the Platforms resolved against the fleet file's directory.
	PlatformPaths []string
}

// Clusters lists every cluster of the fleet with its wave, in wave order.
func (f *Fleet) Clusters() []Member {
	var out []Member
	for i, w := range f.Waves {
		for j, c := range w.Clusters {
			out = append(out, Member{Cluster: c, Wave: w.Name, WaveIndex: i, Path: clusterPath(i, j)})
		}
	}
	return out
}

// Member is a cluster with its place in the fleet.
type Member struct {
	Cluster
	// Wave is the wave's name; WaveIndex its place (0 first).
	Wave      string
	WaveIndex int
	// Path is the cluster's field in the fleet file, for messages
	// ("waves[1].clusters[0]").
	Path *field.Path
}

func clusterPath(wave, cluster int) *field.Path {
	return field.NewPath("waves").Index(wave).Child("clusters").Index(cluster)
}

// Load reads and validates the fleet file at path. contexts are the kubeconfig's
// context names: a cluster naming another is an error, found before any request.
// Every problem is reported at once as a *spec.Error naming the file, line and field.
func Load(path string, contexts []string) (*Fleet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fleet file: %w", err)
	}
	return Parse(path, data, contexts)
}

// Parse is Load of data read from path.
func Parse(path string, data []byte, contexts []string) (*Fleet, error) {
	var f File
	if err := spec.DecodeFile(path, data, &f, func() field.ErrorList { return f.Validate(contexts) }); err != nil {
		return nil, err
	}
	out := &Fleet{File: f, Path: path}
	dir := filepath.Dir(path)
	for _, p := range f.Platforms {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out.PlatformPaths = append(out.PlatformPaths, p)
	}
	return out, nil
}

// Validate checks the file on its own, offline; contexts are the kubeconfig's.
func (f *File) Validate(contexts []string) field.ErrorList {
	var errs field.ErrorList
	if f.APIVersion != APIVersion {
		errs = append(errs, required("apiVersion", f.APIVersion, APIVersion))
	}
	if f.Kind != Kind {
		errs = append(errs, required("kind", f.Kind, Kind))
	}
	if len(f.Platforms) == 0 {
		errs = append(errs, field.Required(field.NewPath("platforms"), "list the platform file(s) every cluster gets, relative to the fleet file"))
	}
	for i, p := range f.Platforms {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, field.Required(field.NewPath("platforms").Index(i), "a platform file or directory"))
		}
	}
	if f.MaxFailures < 0 {
		errs = append(errs, field.Invalid(field.NewPath("maxFailures"), f.MaxFailures, "must be 0 (stop at the first failure) or more"))
	}
	if len(f.Waves) == 0 {
		errs = append(errs, field.Required(field.NewPath("waves"), "at least one wave of clusters"))
	}
	known := map[string]bool{}
	for _, c := range contexts {
		known[c] = true
	}
	waveNames := map[string]bool{}
	contextSeen := map[string]bool{}
	nameSeen := map[string]bool{}
	for i, w := range f.Waves {
		wp := field.NewPath("waves").Index(i)
		switch {
		case w.Name == "":
			errs = append(errs, field.Required(wp.Child("name"), "name the wave (canary, staging, production)"))
		case waveNames[w.Name]:
			errs = append(errs, field.Duplicate(wp.Child("name"), w.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(w.Name) {
				errs = append(errs, field.Invalid(wp.Child("name"), w.Name, msg))
			}
		}
		waveNames[w.Name] = true
		if w.MaxParallel < 0 {
			errs = append(errs, field.Invalid(wp.Child("maxParallel"), w.MaxParallel, "must be 0 (all clusters of the wave at once) or more"))
		}
		if len(w.Clusters) == 0 {
			errs = append(errs, field.Required(wp.Child("clusters"), "at least one cluster, by kubeconfig context"))
		}
		for j, c := range w.Clusters {
			cp := clusterPath(i, j)
			switch {
			case c.Context == "":
				errs = append(errs, field.Required(cp.Child("context"), "the cluster's kubeconfig context"))
			case contextSeen[c.Context]:
				errs = append(errs, field.Duplicate(cp.Child("context"), c.Context))
			case !known[c.Context]:
				errs = append(errs, &field.Error{Type: field.ErrorTypeNotFound, Field: cp.Child("context").String(), BadValue: c.Context, Detail: unknownContextDetail(contexts)})
			}
			contextSeen[c.Context] = true
			if c.Name != "" {
				if nameSeen[c.Name] {
					errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
				}
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
				}
			}
			nameSeen[c.DisplayName()] = true
			errs = append(errs, spec.CheckPatches(cp.Child("patches"), c.Patches)...)
		}
	}
	return errs
}

func required(name, got, want string) *field.Error {
	if got == "" {
		return field.Required(field.NewPath(name), fmt.Sprintf("a fleet file has %s: %s", name, want))
	}
	return field.Invalid(field.NewPath(name), got, fmt.Sprintf("a fleet file has %s: %s", name, want))
}

// unknownContextDetail lists the kubeconfig's contexts, so a typo is easy to see.
func unknownContextDetail(contexts []string) string {
	if len(contexts) == 0 {
		return "no such context: the kubeconfig has none (set KUBECONFIG or --kubeconfig)"
	}
	sorted := slices.Clone(contexts)
	sort.Strings(sorted)
	const most = 10
	more := ""
	if len(sorted) > most {
		more = fmt.Sprintf(" and %d more", len(sorted)-most)
		sorted = sorted[:most]
	}
	return "no such context in the kubeconfig; it has " + strings.Join(sorted, ", ") + more
}
