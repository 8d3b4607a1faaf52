/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxSuggestDistance is how many edits (insert, delete, substitute, swap two
// neighbours) an unknown field name may be from a known one to be suggested: enough
// for a typo ("storag", "replcias"), too few to guess at a different word.
const maxSuggestDistance = 2

// unknownField reports a field the schema does not have, as the API server does with
// strict field validation, and suggests the known field at the same place the name
// is closest to: `unknown field "storag", did you mean "storage"?`.
func (v *Validator) unknownField(path string) *field.Error {
	name, known, ok := v.schema.siblings(path)
	if !ok {
		// A place the schema walk cannot follow (a map key with dots): name the whole
		// path rather than guess which part of it is the field.
		name = path
	}
	detail := fmt.Sprintf("unknown field %q", name)
	if s := suggest(name, known); s != "" {
		detail += fmt.Sprintf(", did you mean %q?", s)
	}
	return &field.Error{Type: field.ErrorTypeForbidden, Field: path, Detail: detail}
}

// isUnknownField tells an unknown-field issue (unknownField) from other forbidden
// values: its message says what is wrong by itself, without the error type.
func isUnknownField(is Issue) bool {
	return is.Type == field.ErrorTypeForbidden.String() && strings.HasPrefix(is.Message, "unknown field ")
}

// siblings returns the unknown field's own name at path, as written in the file, and
// the names the schema knows at that place. Pruning writes paths with "." between
// fields and map keys and [i] for list items; the walk follows properties, list items
// and map values down to the first name the schema does not know, and everything from
// there on is the unknown key (a key may itself contain dots). metadata is
// ObjectMeta, which the CRD's schema leaves to the API server.
func (s *crdSchema) siblings(path string) (name string, known []string, ok bool) {
	segs := parsePath(path)
	node := s.structural
	for i, seg := range segs {
		if seg.bracket {
			switch {
			case node.Items != nil:
				node = node.Items
			case node.AdditionalProperties != nil && node.AdditionalProperties.Structural != nil:
				node = node.AdditionalProperties.Structural
			default:
				return "", nil, false
			}
			continue
		}
		if i == 1 && segs[0].name == "metadata" && !segs[0].bracket {
			name, ok := rest(segs[i:])
			return name, objectMetaFields(), ok
		}
		if child, found := node.Properties[seg.name]; found {
			node = &child
			continue
		}
		if len(node.Properties) > 0 {
			name, ok := rest(segs[i:])
			return name, slices.Sorted(maps.Keys(node.Properties)), ok
		}
		if ap := node.AdditionalProperties; ap != nil && ap.Structural != nil {
			node = ap.Structural
			continue
		}
		return "", nil, false
	}
	return "", nil, false
}

// rest joins the remaining name segments of a path back into the key they came from.
func rest(segs []segment) (string, bool) {
	names := make([]string, 0, len(segs))
	for _, s := range segs {
		if s.bracket {
			return "", false
		}
		names = append(names, s.name)
	}
	return strings.Join(names, "."), true
}

// objectMetaFields lists the JSON names of metav1.ObjectMeta's fields, which is what
// the API server decodes metadata into.
func objectMetaFields() []string {
	t := reflect.TypeFor[metav1.ObjectMeta]()
	var names []string
	for i := range t.NumField() {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n != "" && n != "-" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// suggest returns the known name closest to name: one that differs only in case, or
// else the nearest within maxSuggestDistance edits and fewer edits than name has
// characters (so "ab" suggests nothing). Ties go to the first in known's order. It
// returns "" when nothing is close.
func suggest(name string, known []string) string {
	best, bestDist := "", maxSuggestDistance+1
	for _, k := range known {
		if k == name {
			continue
		}
		if strings.EqualFold(k, name) {
			return k
		}
		if d := editDistance(name, k); d < bestDist && d < len([]rune(name)) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b: the number
// of single-character insertions, deletions, substitutions and swaps of two adjacent
// characters that turn a into b (Damerau-Levenshtein without editing a substring
// twice). It counts runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the dynamic-programming table: two back (for swaps), one back,
	// and the current one.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
