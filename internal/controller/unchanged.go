/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// unchanged remembers, per platform, the objects the last pass planned unchanged and
// the resourceVersion each had then. The next pass of the same desired state dry-runs
// only the objects whose resourceVersion moved since: a healthy platform's periodic
// pass costs no dry-run.
type unchanged struct {
	mu sync.Mutex
	m  map[string]unchangedPass
}

type unchangedPass struct {
	// desired identifies what was rendered: a revision's snapshot or a generation.
	desired string
	// versions are the live resourceVersions by Kind/name.
	versions map[string]string
}

// record keeps what p found unchanged, or forgets the platform when its pass failed.
// A pass that wrote keeps its unchanged objects too: what it wrote was planned as a
// change, so is not kept, and a later write of anyone moves an object's
// resourceVersion, which skip compares. The objects of exclude were not compared (left
// to another manager): never kept.
func (u *unchanged) record(platform, desired string, p *plan.Plan, failed bool, exclude map[string]string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]unchangedPass{}
	}
	if failed || p == nil {
		delete(u.m, platform)
		return
	}
	pass := unchangedPass{desired: desired, versions: map[string]string{}}
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			key := objectKey(c.Object.Kind, c.Object.Name)
			if _, excluded := exclude[key]; c.Action == plan.ActionUnchanged && c.ResourceVersion != "" && !excluded {
				pass.versions[key] = c.ResourceVersion
			}
		}
	}
	u.m[platform] = pass
}

// skip returns the planner's Unchanged function for a pass of desired, nil when the
// last pass rendered something else.
func (u *unchanged) skip(platform, desired string) func(obj, live *unstructured.Unstructured) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	pass, ok := u.m[platform]
	if !ok || pass.desired != desired {
		return nil
	}
	return func(obj, live *unstructured.Unstructured) bool {
		rv, ok := pass.versions[objectKey(obj.GetKind(), obj.GetName())]
		return ok && rv == live.GetResourceVersion()
	}
}
