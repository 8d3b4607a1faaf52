/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"math"

	goyaml "go.yaml.in/yaml/v2"
)

// marshalYAML prints an unstructured object as sigs.k8s.io/yaml.Marshal does, byte
// for byte, without its round trip through JSON: that library marshals to JSON, parses
// the JSON back as YAML and marshals that, which was 60% of a `render` whose objects
// came from the render cache. Both end in the same encoder with the same key order
// (go-yaml's); the one value JSON changes on the way is a whole float64 (3.0 prints
// as 3), which yamlValue turns into an integer first.
func marshalYAML(obj map[string]any) ([]byte, error) {
	return goyaml.Marshal(yamlValue(obj))
}

// yamlValue is v with each whole float64 made an int64, the number JSON would print
// and go-yaml read back; v itself is not changed.
func yamlValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = yamlValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = yamlValue(e)
		}
		return out
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<63 {
			return int64(t)
		}
	}
	return v
}
