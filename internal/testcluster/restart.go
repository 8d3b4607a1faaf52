/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testcluster

import (
	"errors"
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
	script, err := repoFile("hack/testcluster/restart.sh")
	if err != nil {
		t.Fatal(err)
	}
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

// repoFile finds path in the repository the test runs in: up from the working
// directory (a package's directory under go test) to the directory holding go.mod.
func repoFile(path string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, path), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the repository (no go.mod above the working directory)")
		}
		dir = parent
	}
}
