/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Restart stops component name of the test cluster (etcd, kube-apiserver, ...), keeps
// it down for down, starts it again with the command line up.sh gave it and returns
// once it serves again (hack/testcluster/restart.sh). kill sends SIGKILL instead of
// SIGTERM. The cluster's state dir is its kubeconfig's.
//
// Every test using the cluster meanwhile sees the outage: tests that restart a
// component run serially, on a cluster of their own (make faults).
func (c *Cluster) Restart(t testing.TB, name string, down time.Duration, kill bool) {
	t.Helper()
	script := RepoFile(t, "hack/testcluster/restart.sh")
	args := []string{name, "--down", strconv.FormatFloat(down.Seconds(), 'f', -1, 64)}
	if kill {
		args = append(args, "--kill")
	}
	cmd := exec.Command(script, args...)
	cmd.Env = append(os.Environ(), "ONTO_TESTCLUSTER_DIR="+filepath.Dir(c.Kubeconfig))
	out, err := cmd.CombinedOutput()
	t.Logf("restart %s (down %s): %s", name, down, out)
	if err != nil {
		t.Fatalf("restart %s: %v", name, err)
	}
}

// RepoFile is the path of path, relative to the repository's root, for a test: found
// up from the working directory (a package's directory under go test) to the
// directory holding go.mod.
func RepoFile(t testing.TB, path string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, path)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test's directory: cannot find %s", path)
		}
		dir = parent
	}
}
