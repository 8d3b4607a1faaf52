/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor_test

import (
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestMain checks the test cluster once for the package's integration tests (they
// skip without one), so unit tests still run under plain `go test`.
func TestMain(m *testing.M) { testcluster.Main(m) }
