/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// FuzzLoad feeds arbitrary bytes to the loader: it must never panic, every failure
// must be a *spec.Error with issues or a plain error with a message, and whatever it
// accepts must pass Validate again (loading is idempotent).
//
//	go test ./pkg/spec/ -run '^$' -fuzz FuzzLoad -fuzztime 60s
func FuzzLoad(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{
		filepath.Join(examplesDir, "*.yaml"),
		filepath.Join("testdata", "valid", "*"),
		filepath.Join("testdata", "invalid", "*.yaml"),
		filepath.Join("testdata", "invalid", "*.json"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, m...)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Add([]byte("---\n--- # c\n...\n"))
	v := newValidator(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := v.Load("fuzz.yaml", data)
		if err != nil {
			var serr *spec.Error
			if errors.As(err, &serr) && len(serr.Issues) == 0 {
				t.Fatalf("*spec.Error without issues: %v", err)
			}
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		if len(ps) == 0 {
			t.Fatal("no error and no platform")
		}
		for _, p := range ps {
			if err := v.Validate(p.DeepCopy()); err != nil {
				t.Fatalf("a loaded platform fails Validate: %v", err)
			}
		}
	})
}
