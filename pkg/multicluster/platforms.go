/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package multicluster

import (
	"fmt"
	"slices"

	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// LoadPlatforms reads the fleet's platform files with load, in order, and gives each
// cluster its platforms, by kubeconfig context: every platform of the files, with the
// cluster's own patches added to its spec.patches and validated with v. All offline:
// two platforms in one namespace, a patch the validator refuses or one that matches
// no object (the render fails) is an error before any request.
func (f *Fleet) LoadPlatforms(load func(path string) ([]platform.Loaded, error), v *spec.Validator) (map[string][]platform.Loaded, error) {
	var base []platform.Loaded
	seen := map[string]string{}
	for _, p := range f.PlatformPaths {
		loaded, err := load(p)
		if err != nil {
			return nil, err
		}
		for _, lp := range loaded {
			ref := lp.Platform.Namespace + "/" + lp.Platform.Name
			if other, ok := seen[lp.Platform.Namespace]; ok {
				return nil, fmt.Errorf("%s: platforms %s and %s are both in namespace %s (one namespace holds one platform)", f.Path, other, ref, lp.Platform.Namespace)
			}
			seen[lp.Platform.Namespace] = ref
		}
		base = append(base, loaded...)
	}
	out := map[string][]platform.Loaded{}
	for _, m := range f.Clusters() {
		for _, lp := range base {
			lp.Platform = lp.Platform.DeepCopy()
			if len(m.Patches) > 0 {
				// Stored with the cluster's platform, after the file's own, so every
				// later run there (upgrade, rollback, the watch) renders them too.
				lp.Platform.Spec.Patches = append(slices.Clone(lp.Platform.Spec.Patches), m.Patches...)
				where := fmt.Sprintf("%s: cluster %s (%s.patches, added to the spec.patches of %s/%s)", f.Path, m.DisplayName(), m.Path, lp.Platform.Namespace, lp.Platform.Name)
				if err := v.Validate(lp.Platform); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				// A patch that matches no object fails the render: find it now.
				if _, err := lp.Render(); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
			}
			out[m.Context] = append(out[m.Context], lp)
		}
	}
	return out, nil
}
