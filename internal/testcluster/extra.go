/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
)

// EnvBin names the environment variable with the directory of the control plane's
// binaries (hack/testcluster/build.sh prints it; hack/test.sh exports it).
const EnvBin = "ONTO_TESTCLUSTER_BIN"

// StartExtra starts n more control planes for the test, each of its own (fresh state
// in a temporary directory, free ports, one worker node, no GPU node), with the
// binaries of the main one, and stops them when the test ends. They cost about 0.6 GB
// and 10 s each, so only the tests of what spans clusters (apply --fleet) start
// them. The test is skipped without the main cluster (New) or when EnvBin does not
// name the built binaries.
func StartExtra(t testing.TB, n int) []*Cluster {
	t.Helper()
	if os.Getenv(EnvKubeconfig) == "" {
		mustrun.Skipf(t, "integration test skipped: no cluster (run `make test`, or set %s)", EnvKubeconfig)
	}
	bin := os.Getenv(EnvBin)
	if bin == "" {
		mustrun.Skipf(t, "test of several clusters skipped: %s does not name the control plane's binaries (hack/testcluster/build.sh prints it)", EnvBin)
	}
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		mustrun.Skipf(t, "test of several clusters skipped: %s=%s has no kube-apiserver: %v", EnvBin, bin, err)
	}
	up := RepoFile(t, "hack/testcluster/up.sh")
	down := RepoFile(t, "hack/testcluster/down.sh")
	clusters := make([]*Cluster, n)
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		dir := t.TempDir()
		dirs[i] = dir
		// Registered before the cluster starts, so a half-started one is stopped too;
		// it runs before t.TempDir's removal (cleanups run last-in first-out).
		t.Cleanup(func() {
			cmd := exec.Command(down)
			cmd.Env = append(os.Environ(), "ONTO_TESTCLUSTER_DIR="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("stop extra cluster %s: %v\n%s", dir, err, out)
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = startExtra(t.Context(), up, bin, dir)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start extra cluster %d: %v", i, err)
		}
	}
	for i := range n {
		clusters[i] = connect(t, filepath.Join(dirs[i], "kubeconfig"))
	}
	return clusters
}

// startExtra runs up.sh for a cluster in dir on free ports.
func startExtra(ctx context.Context, up, bin, dir string) error {
	ports, err := freePorts(7)
	if err != nil {
		return err
	}
	names := []string{"ETCD", "ETCD_PEER", "APISERVER", "KCM", "SCHEDULER", "KWOK", "METRICS"}
	env := append(os.Environ(), "ONTO_TESTCLUSTER_DIR="+dir, EnvBin+"="+bin,
		"ONTO_TESTCLUSTER_WORKERS=1", "ONTO_TESTCLUSTER_GPU=0", "ONTO_TESTCLUSTER_FAST_SSD=0",
		// Real nodes are the main cluster's: an extra one runs on loopback alone.
		EnvRealNodes+"=0")
	for i, name := range names {
		env = append(env, "ONTO_TESTCLUSTER_"+name+"_PORT="+strconv.Itoa(ports[i]))
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, up)
	cmd.Env = env
	// At the timeout, SIGTERM, not SIGKILL: up.sh's exit trap then stops what it
	// started. Killed, it left etcd and kube-apiserver running after the test.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", up, err, out)
	}
	return nil
}

// freePorts returns n ports on 127.0.0.1 that were free a moment ago: each is
// listened on, all at once so none repeats, then released for up.sh.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
