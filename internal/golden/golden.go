/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package golden compares test output with golden files kept beside a package's
// testdata, and rewrites them when the tests run with -update:
//
//	go test ./pkg/spec/ -run TestLoadInvalid -update
//
// Golden files are the reviewable record of what a user sees (messages, rendered
// objects), so a change in output shows up as a diff in the commit.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is registered on the test binary's flag set of every package that imports
// golden. It is the package's only variable: the testing flag set is global by design.
var update = flag.Bool("update", false, "rewrite golden files with the actual output")

// Assert fails t when got differs from the content of the golden file at path, showing
// a diff (-want +got). With -update it writes got to path instead, creating parent
// directories. Line endings are normalized to LF on both sides, so a checkout with
// CRLF line endings does not fail.
func Assert(t testing.TB, got []byte, path string) {
	t.Helper()
	got = normalize(got)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("create golden directory: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("write golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	want = normalize(want)
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (-want +got); run with -update to accept:\n%s",
			path, cmp.Diff(string(want), string(got)))
	}
}

// Updating reports whether the tests run with -update, for a test that keeps a
// golden record other than one file (a directory of generated pages) and writes it
// itself.
func Updating() bool { return *update }

func normalize(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}
