/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package mustrun is the one way a test of this module skips. `make test` sets
// EnvNoSkip, and a test that would skip then fails with its reason: a suite that
// goes green by testing nothing (no cluster, no real nodes, a missing tool) is a
// failed suite. Outside `make test` (go test ./... on a laptop) the test skips with
// one line naming what is missing.
package mustrun

import (
	"fmt"
	"os"
	"testing"
)

// EnvNoSkip is set to 1 by hack/test.sh for `make test`.
const EnvNoSkip = "ONTO_TEST_NO_SKIP"

// Enforced reports whether skips are failures (`make test`).
func Enforced() bool { return os.Getenv(EnvNoSkip) == "1" }

// Skipf skips the test with the message, or fails it when Enforced.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Enforced() {
		t.Fatalf("%s; %s=1 (make test): every test must run, none may skip", msg, EnvNoSkip)
	}
	t.Skip(msg) //nolint:forbidigo // the one place a test of this module skips
}

// SkipIfShort skips the test under -short (make unit-test's quick loop), saying why
// it is long; -short under `make test` is a failure like any skip.
func SkipIfShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		Skipf(t, "-short: %s", why)
	}
}
