/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// LoadPatches decodes a user's patch file, in either of two forms:
//   - a YAML list of kustomize patch entries, `- {patch: ..., target: {...}}`, the value
//     of a kustomization's `patches:` (JSON 6902 operations need a target);
//   - one or more strategic-merge patch documents, each a partial object naming its
//     apiVersion, kind and metadata.name.
//
// name is used in errors. Unknown fields of an entry are errors.
func LoadPatches(name string, data []byte) ([]Patch, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: no patches", name)
	}
	var probe any
	if err := yaml.Unmarshal(firstDocument(trimmed), &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, isList := probe.([]any); isList {
		var patches []Patch
		if err := yaml.UnmarshalStrict(trimmed, &patches); err != nil {
			return nil, fmt.Errorf("%s: patch list: %w", name, err)
		}
		for i, p := range patches {
			if strings.TrimSpace(p.Patch) == "" {
				return nil, fmt.Errorf("%s: patch %d: patch is empty", name, i)
			}
		}
		return patches, nil
	}
	var patches []Patch
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(trimmed)))
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if meta.APIVersion == "" || meta.Kind == "" || meta.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: document %d: a strategic-merge patch needs apiVersion, kind and metadata.name (or write a list of {patch, target} entries)", name, i+1)
		}
		patches = append(patches, Patch{Patch: string(doc)})
	}
	return patches, nil
}

func firstDocument(data []byte) []byte {
	if i := bytes.Index(data, []byte("\n---")); i >= 0 {
		return data[:i]
	}
	return data
}
