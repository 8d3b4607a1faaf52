/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// emptySegment finds a line with an empty field or message: "file:7: : ..." or a
// line ending in ": ".
var emptySegment = regexp.MustCompile(`: :|:\s*$`)

// TestInvalidFileReadsTheSame: a bad file's problems read the same, line for line,
// whether `validate` reports them or `apply` (or `plan`) refuses the file, and no line
// has an empty segment. apply and plan fail on the file before they contact the
// cluster, which here is unreachable.
func TestInvalidFileReadsTheSame(t *testing.T) {
	head := "apiVersion: onto.paas/v1alpha1\nkind: OntoPlatform\nmetadata:\n  name: onto-test\n  namespace: onto-system\n"
	tests := []struct {
		name, content string
		// want is a line both commands must print, after the file name.
		want string
	}{
		{name: "required", content: head + "spec:\n  gateway: {replicas: 2}\n",
			want: ":6: spec.version: Required value: the platform's release version is required (known: 1.5.0, 1.6.0)"},
		{name: "yaml-syntax", content: head + "spec:\n  version: \"1.6.0\"\n  gateway:\n    replicas: [3\n",
			want: ":9: invalid YAML: did not find expected ',' or ']'; a [ ] or { } is not closed, or two of its items have no comma between them"},
		{name: "empty", content: "# nothing yet\n",
			want: ": the file is empty: expected an OntoPlatform document (kubectl onto init writes a starter)"},
		{name: "did-you-mean", content: head + "spec:\n  version: \"1.6.0\"\n  infrastructure:\n    postgres:\n      storag: 10Gi\n",
			want: `:10: spec.infrastructure.postgres.storag: unknown field "storag", did you mean "storage"?`},
		{name: "many", content: "", want: `:22: spec.intelligencePlane.reasoningService.colour: unknown field "colour"`},
	}
	kubeconfig := kubeconfigFor(t, "https://127.0.0.1:1")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join("testdata", "bad-platform.yaml")
			if tc.content != "" {
				file = filepath.Join(t.TempDir(), "platform.yaml")
				if err := os.WriteFile(file, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			validate := runCmd(t, "validate", "-f", file)
			if validate.code != 1 {
				t.Fatalf("validate exit %d, want 1\n%s%s", validate.code, validate.stdout, validate.stderr)
			}
			want := issueLines(t, validate.stdout, "✗ "+file+": ")
			if !strings.Contains(strings.Join(want, "\n"), file+tc.want) {
				t.Errorf("validate lacks %q:\n%s", file+tc.want, validate.stdout)
			}
			for _, l := range want {
				if emptySegment.MatchString(l) {
					t.Errorf("a line with an empty segment: %q", l)
				}
			}
			for _, args := range [][]string{
				{"apply", "-f", file, "--kubeconfig", kubeconfig},
				{"plan", "-f", file, "--kubeconfig", kubeconfig},
			} {
				r := runCmd(t, args...)
				if r.code != 1 {
					t.Fatalf("%s exit %d, want 1\n%s%s", args[0], r.code, r.stdout, r.stderr)
				}
				got := issueLines(t, r.stderr, "error: "+file+": ")
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s says:\n%s\nvalidate says:\n%s", args[0], strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if strings.Contains(r.stderr, "127.0.0.1:1") {
					t.Errorf("%s contacted the cluster for an invalid file:\n%s", args[0], r.stderr)
				}
			}
		})
	}
}

// issueLines returns the lines after the header line, which must start with header.
func issueLines(t *testing.T, out, header string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], header) {
		t.Fatalf("output does not start with %q:\n%s", header, out)
	}
	return lines[1:]
}
