/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// lineIndex finds the line of a field in a document from its yaml.v3 node tree. The
// validators work on decoded JSON, which has no positions, so every error's field path
// is looked up here afterwards.
type lineIndex struct {
	root *yaml.Node
	// offset turns the document's lines into the file's.
	offset int
}

// maxAliasDepth bounds how far lookups follow aliases, so a document whose aliases
// refer to each other cannot make a lookup loop.
const maxAliasDepth = 32

// line returns the file line of the field at path ("spec.a.b[0].c", "spec.m[key]" or,
// as the OpenAPI validator writes map keys, "spec.m.key.with.dots"). When the field is
// absent, as a missing required field is, it returns the line of its nearest ancestor
// present in the document; the document's first line for the root.
func (x lineIndex) line(path string) int {
	if x.root == nil {
		return 0
	}
	n := x.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	best, _ := resolve(n, parsePath(path), n.Line, 0)
	return best + x.offset
}

// segment is one step of a field path: a field name, or the content of [...], which is
// a list index or a map key.
type segment struct {
	name    string
	bracket bool
}

func parsePath(path string) []segment {
	var segs []segment
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			segs = append(segs, segment{name: cur.String()})
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				cur.WriteString(path[i:])
				i = len(path)
				continue
			}
			segs = append(segs, segment{name: path[i+1 : i+end], bracket: true})
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return segs
}

// resolve walks segs down from n and returns the line of the deepest node reached and
// how many segments it consumed. A map key may contain dots ("requests.cpu") and the
// OpenAPI validator does not bracket it, so at a mapping it tries every run of name
// segments as a key and keeps the walk that gets furthest.
func resolve(n *yaml.Node, segs []segment, line, depth int) (int, int) {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxAliasDepth; i++ {
		n = n.Alias
	}
	if len(segs) == 0 || depth > maxAliasDepth*4 {
		return line, 0
	}
	switch n.Kind {
	case yaml.MappingNode:
		bestLine, bestUsed := line, 0
		for k := 1; k <= len(segs); k++ {
			if k > 1 && segs[k-1].bracket {
				break
			}
			key := segs[0].name
			if k > 1 {
				names := make([]string, k)
				for j := range k {
					names[j] = segs[j].name
				}
				key = strings.Join(names, ".")
			}
			kn, vn := lookup(n, key, 0)
			if kn == nil {
				if segs[0].bracket {
					break
				}
				continue
			}
			l, used := resolve(vn, segs[k:], kn.Line, depth+1)
			if used+k > bestUsed {
				bestLine, bestUsed = l, used+k
			}
			if segs[0].bracket {
				break
			}
		}
		return bestLine, bestUsed
	case yaml.SequenceNode:
		if !segs[0].bracket {
			return line, 0
		}
		i, err := strconv.Atoi(segs[0].name)
		if err != nil || i < 0 || i >= len(n.Content) {
			return line, 0
		}
		item := n.Content[i]
		l, used := resolve(item, segs[1:], item.Line, depth+1)
		return l, used + 1
	}
	return line, 0
}

// lookup finds key in mapping n, then in the mappings it merges with "<<". The last
// occurrence of a duplicated key wins, as it does when the YAML is decoded.
func lookup(n *yaml.Node, key string, depth int) (k, v *yaml.Node) {
	for n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxAliasDepth {
		n, depth = n.Alias, depth+1
	}
	if n.Kind != yaml.MappingNode || depth > maxAliasDepth {
		return nil, nil
	}
	for i := len(n.Content) - 2; i >= 0; i -= 2 {
		if n.Content[i].Value == key && n.Content[i].Tag != "!!merge" {
			return n.Content[i], n.Content[i+1]
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			continue
		}
		merged := []*yaml.Node{n.Content[i+1]}
		if m := n.Content[i+1]; m.Kind == yaml.SequenceNode {
			merged = m.Content
		}
		for _, m := range merged {
			if k, v := lookup(m, key, depth+1); k != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

// duplicateKeys reports every key that appears twice in one mapping, at the line of
// the repeated key. kubectl rejects them (strict decoding) because YAML would
// otherwise keep the last value silently. Aliased nodes are not walked: their keys
// were checked where they are defined.
func duplicateKeys(n *yaml.Node, path *field.Path, offset int, report func(*field.Error, int)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			duplicateKeys(c, path, offset, report)
		}
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				continue
			}
			child := childPath(path, k.Value)
			if first, ok := seen[k.Value]; ok {
				report(&field.Error{Type: field.ErrorTypeDuplicate, Field: child.String(), BadValue: k.Value,
					Detail: fmt.Sprintf("key already set at line %d", first+offset)}, k.Line+offset)
			} else {
				seen[k.Value] = k.Line
			}
			duplicateKeys(v, child, offset, report)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			duplicateKeys(c, path.Index(i), offset, report)
		}
	}
}

// childPath names a map key the way field errors do: as a child when it is a plain
// name, in brackets when it contains a dot or a slash (label keys, resource names).
func childPath(p *field.Path, key string) *field.Path {
	if p == nil {
		return field.NewPath(key)
	}
	if strings.ContainsAny(key, "./[]") {
		return p.Key(key)
	}
	return p.Child(key)
}
