/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// The metadata lines of a platform file, as the examples write them (two spaces in).
var (
	metadataName      = regexp.MustCompile(`(?m)^  name: .*$`)
	metadataNamespace = regexp.MustCompile(`(?m)^  namespace: .*$`)
)

// MoveTo returns the platform file data with its metadata.namespace replaced by
// namespace and, unless name is "", its metadata.name by name. It edits the text, so
// the file stays as its author wrote it (comments, unset defaults).
func MoveTo(data []byte, name, namespace string) []byte {
	out := metadataNamespace.ReplaceAllLiteral(data, []byte("  namespace: "+namespace))
	if name != "" {
		// Only the first: the metadata block comes before the spec in the examples.
		done := false
		out = metadataName.ReplaceAllFunc(out, func(m []byte) []byte {
			if done {
				return m
			}
			done = true
			return []byte("  name: " + name)
		})
	}
	return out
}

// Fleet is n tenant platforms made from one platform file, each in a namespace of its
// own: one file per tenant in Dir (what `kubectl onto apply -f Dir` takes) and the
// same rendered objects in Manifest (what kubectl applies).
type Fleet struct {
	Dir      string
	Manifest string
	// Namespaces of the tenants, in order (tenant-000 first).
	Namespaces []string
	// Objects is the number of objects in Manifest.
	Objects int
	// Kinds is the number of kinds a tenant renders, its OntoPlatform's included: the
	// unit of the "requests per rendered kind" of a fleet's plan.
	Kinds int
}

// WriteFleet writes n tenants of the platform file at tenantFile under dir: platforms
// tenant-000, tenant-001, ... in namespaces prefix-000, prefix-001, ...
func WriteFleet(tenantFile, dir, prefix string, n int) (*Fleet, error) {
	if n < 1 {
		return nil, fmt.Errorf("a fleet of %d tenants: want at least 1", n)
	}
	data, err := os.ReadFile(tenantFile)
	if err != nil {
		return nil, err
	}
	f := &Fleet{Dir: filepath.Join(dir, "platforms"), Manifest: filepath.Join(dir, "objects.yaml")}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, err
	}
	var desired []*plan.Desired
	kinds := map[schema.GroupKind]bool{v1alpha1.GroupVersionKind.GroupKind(): true}
	for i := range n {
		name, ns := fmt.Sprintf("tenant-%03d", i), fmt.Sprintf("%s-%03d", prefix, i)
		file := filepath.Join(f.Dir, name+".yaml")
		if err := os.WriteFile(file, MoveTo(data, name, ns), 0o644); err != nil {
			return nil, err
		}
		d, err := Desired(file, ns)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", name, err)
		}
		desired = append(desired, d)
		f.Namespaces = append(f.Namespaces, ns)
		f.Objects += len(d.Objects()) + 1 // and its OntoPlatform
		for _, o := range d.Objects() {
			kinds[o.GroupVersionKind().GroupKind()] = true
		}
	}
	f.Kinds = len(kinds)
	f.Objects++ // the CRD
	return f, WriteManifest(f.Manifest, desired...)
}
