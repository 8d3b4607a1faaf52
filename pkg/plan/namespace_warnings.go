/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"
	"sort"
	"strings"
)

// podSecurityLabelPrefix starts every Pod Security admission label of a namespace.
const podSecurityLabelPrefix = "pod-security.kubernetes.io/"

// namespaceWarnings warns of a change of the Pod Security labels of a namespace that
// exists: the namespace may hold other workloads, whose new pods the changed labels
// admit or refuse from then on, so the change must not pass as one more updated field.
// A namespace the plan creates has no pods yet and is not warned of.
func namespaceWarnings(p *Plan) []string {
	var out []string
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			if c.Object.Kind != "Namespace" || c.Object.Group != "" || c.Action != ActionUpdate {
				continue
			}
			if changes := podSecurityLabelChanges(c.Fields); len(changes) > 0 {
				out = append(out, fmt.Sprintf("namespace %s exists and its Pod Security labels change (%s): "+
					"new pods of every workload in it, not only this platform's, are admitted by the new labels; "+
					"spec.tenancy.podSecurity sets them (enforce, warn or none)", c.Object.Name, strings.Join(changes, ", ")))
			}
		}
	}
	return out
}

// podSecurityLabelChanges are the Pod Security labels among fields, each as
// "key: old → new", sorted by key. A label is a field of its own
// ("metadata.labels[pod-security.kubernetes.io/enforce]"), or part of the whole labels
// map when the namespace had none.
func podSecurityLabelChanges(fields []FieldChange) []string {
	old, new := map[string]string{}, map[string]string{}
	seen := map[string]bool{}
	for _, f := range fields {
		if f.Path == "metadata.labels" {
			for k, v := range stringMap(f.Old) {
				old[k], seen[k] = v, true
			}
			for k, v := range stringMap(f.New) {
				new[k], seen[k] = v, true
			}
			continue
		}
		key, ok := strings.CutPrefix(f.Path, "metadata.labels[")
		if !ok {
			continue
		}
		key = strings.TrimSuffix(key, "]")
		if s, ok := f.Old.(string); ok {
			old[key] = s
		}
		if s, ok := f.New.(string); ok {
			new[key] = s
		}
		seen[key] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		if strings.HasPrefix(k, podSecurityLabelPrefix) && old[k] != new[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %s → %s", strings.TrimPrefix(k, podSecurityLabelPrefix), orNone(old[k]), orNone(new[k])))
	}
	return out
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
