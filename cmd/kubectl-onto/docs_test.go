/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
)

// referenceDir is the command reference generated from the command tree, one
// Markdown page per command. `make docs` rewrites it (this file's test with -update).
var referenceDir = filepath.Join("..", "..", "docs", "reference")

// writeReference writes one Markdown page per command of the `kubectl onto` tree
// into dir. The tree is built as main builds it, with an empty environment, so no
// ONTO_* variable or config file of this machine shows in a default. The caller
// sets HOME (see TestDocsReference): kubectl's --cache-dir default comes from it
// when the flags are made.
func writeReference(dir string) error {
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard(), func(string) string { return "" })
	// No "Auto generated on <date>" line: the pages change only with the commands.
	walkCommands(root, func(c *cobra.Command) { c.DisableAutoGenTag = true })
	return doc.GenMarkdownTree(root, dir)
}

// TestDocsReference fails when docs/reference is not what the commands generate:
// a page differs, is missing or is left over. Run `make docs` to rewrite it.
func TestDocsReference(t *testing.T) {
	// --cache-dir defaults to $HOME/.kube/cache, read when the flags are made (and
	// KUBECACHEDIR, which wins when set): a literal $HOME renders the same default
	// on every machine, as the user reads it.
	t.Setenv("HOME", "$HOME")
	t.Setenv("KUBECACHEDIR", "")
	generated := t.TempDir()
	if err := writeReference(generated); err != nil {
		t.Fatalf("generate the command reference: %v", err)
	}
	if golden.Updating() {
		if err := replaceDir(referenceDir, generated); err != nil {
			t.Fatalf("write %s: %v", referenceDir, err)
		}
		return
	}
	if diffs := compareDirs(generated, referenceDir); len(diffs) > 0 {
		t.Fatalf("docs/reference is stale: run make docs\n%s", strings.Join(diffs, "\n"))
	}
}

// TestDocsReferenceNames: the pages name the commands as a user types them, through
// kubectl, and carry nothing of the machine that generated them.
func TestDocsReferenceNames(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("KUBECACHEDIR", "")
	dir := t.TempDir()
	if err := writeReference(dir); err != nil {
		t.Fatal(err)
	}
	apply, err := os.ReadFile(filepath.Join(dir, "kubectl_onto_apply.md"))
	if err != nil {
		t.Fatalf("no page for apply: %v", err)
	}
	for _, want := range []string{"## kubectl onto apply\n", "kubectl onto apply -f FILE|DIR [flags]"} {
		if !bytes.Contains(apply, []byte(want)) {
			t.Errorf("the apply page has no %q", want)
		}
	}
	for _, unwanted := range []string{"kubectl-onto apply", "Auto generated"} {
		if bytes.Contains(apply, []byte(unwanted)) {
			t.Errorf("the apply page has %q", unwanted)
		}
	}
	// The HOME of this test shows in the cache default; TestDocsReference's does not.
	if !bytes.Contains(apply, []byte("/home/someone/.kube/cache")) {
		t.Errorf("the apply page does not take --cache-dir's default from HOME; the reference would not be machine-independent by setting it")
	}
}

// compareDirs lists, sorted, every page that differs between the generated and the
// committed reference, or is in only one of them.
func compareDirs(generated, committed string) []string {
	want := readPages(committed)
	got := readPages(generated)
	var diffs []string
	for name, content := range got {
		old, ok := want[name]
		switch {
		case !ok:
			diffs = append(diffs, "missing: "+name)
		case !bytes.Equal(bytes.ReplaceAll(old, []byte("\r\n"), []byte("\n")), content):
			diffs = append(diffs, "differs: "+name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			diffs = append(diffs, "no such command: "+name)
		}
	}
	slices.Sort(diffs)
	return diffs
}

// readPages reads the Markdown pages of dir by name; a missing dir has none.
func readPages(dir string) map[string][]byte {
	pages := map[string][]byte{}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			pages[filepath.Base(m)] = b
		} else {
			pages[filepath.Base(m)] = nil
		}
	}
	return pages
}

// replaceDir makes dir's pages those of src: it writes every page of src and
// removes the pages src does not have (a command removed or renamed).
func replaceDir(dir, src string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	want := readPages(src)
	for name := range readPages(dir) {
		if _, ok := want[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, content := range want {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestCompareDirs: a page changed, one missing and one left over are each reported.
func TestCompareDirs(t *testing.T) {
	generated, committed := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(generated, "same.md", "a\n")
	write(committed, "same.md", "a\r\n") // a CRLF checkout is not stale
	write(generated, "changed.md", "new\n")
	write(committed, "changed.md", "old\n")
	write(generated, "new.md", "n\n")
	write(committed, "gone.md", "g\n")
	got := compareDirs(generated, committed)
	want := []string{"differs: changed.md", "missing: new.md", "no such command: gone.md"}
	if !slices.Equal(got, want) {
		t.Errorf("compareDirs = %q, want %q", got, want)
	}
}
