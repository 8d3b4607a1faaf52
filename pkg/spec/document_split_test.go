/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestSplitDocumentsAsYAMLReader pins splitDocuments to the reader kubectl uses,
// apimachinery's util/yaml.YAMLReader: the same documents, less those holding only
// blanks and comments (kubectl decodes them to nothing and skips them). The fork
// exists for what YAMLReader does not say: the line each document starts on.
//
// Byte for byte but for three things a YAML parser reads the same either way:
// YAMLReader keeps a separator line that opens a document ("---\na: 1\n" is one
// document to it), ends its lines with "\n" where the file has "\r\n", and ends the
// last document with a "\n" the file may lack. normalize removes those.
func TestSplitDocumentsAsYAMLReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		lines []int
	}{
		{"one document", "a: 1\nb: 2\n", []int{1}},
		{"leading separator", "---\na: 1\n", []int{2}},
		{"two documents", "a: 1\n---\nb: 2\n", []int{1, 3}},
		{"separator with a comment", "a: 1\n--- # next\nb: 2\n", []int{1, 3}},
		{"separator with blanks", "a: 1\n---   \nb: 2\n", []int{1, 3}},
		{"empty documents", "---\n---\na: 1\n---\n\n---\n", []int{3}},
		{"comment-only document", "# header\n---\na: 1\n---\n# trailer\n", []int{3}},
		{"document end marker", "a: 1\n...\n---\nb: 2\n", []int{1, 4}},
		{"no final newline", "a: 1\n---\nb: 2", []int{1, 3}},
		{"separator inside a block scalar stays", "a: |\n  x\n  ---\nb: 2\n", []int{1}},
		{"CRLF", "a: 1\r\n---\r\nb: 2\r\n", []int{1, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(tc.in)))
			for {
				doc, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if doc = bytes.TrimPrefix(doc, []byte("---\n")); !isBlankDocument(doc) {
					want = append(want, string(doc))
				}
			}
			var got []string
			var lines []int
			for _, d := range splitDocuments([]byte(tc.in)) {
				got = append(got, normalize(string(d.data)))
				lines = append(lines, d.firstLine)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("documents differ from YAMLReader's (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.lines, lines); diff != "" {
				t.Errorf("first lines (-want +got):\n%s", diff)
			}
		})
	}
}

// normalize ends every line of doc with "\n", as YAMLReader's line reader does.
func normalize(doc string) string {
	doc = strings.ReplaceAll(doc, "\r\n", "\n")
	if !strings.HasSuffix(doc, "\n") {
		doc += "\n"
	}
	return doc
}
