/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"fmt"
	"io"

	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// ValidationResult is what `validate` reports for one file.
type ValidationResult struct {
	File      string        `json:"file"`
	Valid     bool          `json:"valid"`
	Platforms []PlatformRef `json:"platforms,omitempty"`
	Issues    []spec.Issue  `json:"issues,omitempty"`
	// Incomplete is spec.Error's: some rules were not checked because of the issues.
	Incomplete bool `json:"incomplete,omitempty"`
	// Warnings of a valid file: what it says that is probably not meant.
	Warnings []spec.Warning `json:"warnings,omitempty"`
}

// PlatformRef names one OntoPlatform found in a file.
type PlatformRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Version   string `json:"version"`
}

// WriteText prints one line per platform when valid, then its warnings, or one line
// per issue with the file and line first, the way compilers do, so editors can jump to
// it.
func (r ValidationResult) WriteText(out io.Writer, t *Terminal) error {
	if r.Valid {
		for _, p := range r.Platforms {
			if _, err := fmt.Fprintf(out, "%s %s: OntoPlatform %s/%s (version %s) is valid\n",
				t.OK.Render("✓"), r.File, p.Namespace, p.Name, p.Version); err != nil {
				return err
			}
		}
		for _, w := range r.Warnings {
			if _, err := fmt.Fprintf(out, "  %s %s: %s: %s\n", t.Warn.Render("! warning:"), r.File, t.Bold.Render(w.Field), w.Message); err != nil {
				return err
			}
		}
		return nil
	}
	noun := "errors"
	if len(r.Issues) == 1 {
		noun = "error"
	}
	if _, err := fmt.Fprintf(out, "%s %s: %d %s\n", t.Fail.Render("✗"), r.File, len(r.Issues), noun); err != nil {
		return err
	}
	// The lines are spec.Error's, word for word, so `validate` and a command that
	// fails on the same file (apply, plan) say the same thing; only the field is bold.
	for _, is := range r.Issues {
		text := is.Text()
		if is.Field != "" {
			text = t.Bold.Render(is.Field) + ": " + text
		}
		if _, err := fmt.Fprintf(out, "  %s: %s\n", is.Location(r.File), text); err != nil {
			return err
		}
	}
	if r.Incomplete {
		if _, err := fmt.Fprintf(out, "  %s\n", spec.IncompleteNote); err != nil {
			return err
		}
	}
	return nil
}

// ValidationResults is what `validate` reports for a directory: one result per platform
// file, in the order read, and the problems between files.
type ValidationResults struct {
	// Directory is the directory given with -f.
	Directory string `json:"directory"`
	// Valid is true when every file is valid and no two platforms share a namespace.
	Valid bool               `json:"valid"`
	Files []ValidationResult `json:"files"`
	// Errors are the problems of the platforms together (two in one namespace), which
	// no single file has.
	Errors []string `json:"errors,omitempty"`
}

// WriteText prints each file's result, then the problems between files.
func (r ValidationResults) WriteText(out io.Writer, t *Terminal) error {
	for _, f := range r.Files {
		if err := f.WriteText(out, t); err != nil {
			return err
		}
	}
	for _, e := range r.Errors {
		if _, err := fmt.Fprintf(out, "%s %s: %s\n", t.Fail.Render("✗"), r.Directory, e); err != nil {
			return err
		}
	}
	return nil
}
