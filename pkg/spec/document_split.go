/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"bytes"
)

// document is one YAML (or JSON) document of a file.
type document struct {
	data []byte
	// firstLine is the 1-based line of the file where data starts, to turn the
	// document's own line numbers into the file's.
	firstLine int
}

// splitDocuments cuts a YAML stream at "---" separator lines the way kubectl does
// (k8s.io/apimachinery/pkg/util/yaml.YAMLReader): a line starting with "---" followed
// only by blanks or a comment. Each document keeps the line it starts on; documents
// with nothing but blanks and comments are dropped, as kubectl skips them.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	flush := func(end int) {
		if d := data[start:end]; !isBlankDocument(d) {
			docs = append(docs, document{data: d, firstLine: startLine})
		}
	}
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		if isSeparator(data[i:next]) {
			flush(i)
			start, startLine = next, line+1
		}
		i = next
		line++
	}
	flush(len(data))
	return docs
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := bytes.TrimSpace(line[3:])
	return len(rest) == 0 || rest[0] == '#'
}

// isBlankDocument reports whether d holds only whitespace, comments and the
// document-end marker "...".
func isBlankDocument(d []byte) bool {
	for _, l := range bytes.Split(d, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' && !bytes.Equal(l, []byte("...")) {
			return false
		}
	}
	return true
}
