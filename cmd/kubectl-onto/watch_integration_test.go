/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// lockedBuffer is a process's stderr, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchLeaderElection runs the built binary's watch twice with --leader-elect:
// one leads and writes; SIGKILL hands the lead to the other within the lease's
// duration, SIGTERM (the lease released) within its retry period; only the leader
// repairs a deleted Deployment.
func TestWatchLeaderElection(t *testing.T) {
	plugin := builtPlugin(t)
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	file := platformFile(t, ns, smallSpec)
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	bin := plugin()
	type watcher struct {
		cmd   *exec.Cmd
		audit string
		log   *lockedBuffer
	}
	start := func(name string) *watcher {
		w := &watcher{audit: filepath.Join(t.TempDir(), name+".jsonl"), log: &lockedBuffer{}}
		w.cmd = exec.Command(bin, "watch", "-n", ns, "--leader-elect", "--audit-log", w.audit, kc)
		w.cmd.Stderr = w.log
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = w.cmd.Process.Kill()
			_ = w.cmd.Wait()
		})
		return w
	}
	holder := func() string {
		l, err := c.Kube.CoordinationV1().Leases(ns).Get(t.Context(), controller.LeaderElectionID, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	waitHolder := func(what string, timeout time.Duration, cond func(string) bool) string {
		t.Helper()
		var h string
		if err := testcluster.Eventually(t.Context(), timeout, func(context.Context) (bool, error) {
			h = holder()
			return cond(h), nil
		}); err != nil {
			t.Fatalf("%s: %v (holder %q)", what, err, h)
		}
		return h
	}

	a, b := start("a"), start("b")
	first := waitHolder("a leader", 30*time.Second, func(h string) bool { return h != "" })
	// Only the leader repairs: delete a Deployment, and it comes back once.
	if err := c.Kube.AppsV1().Deployments(ns).Delete(t.Context(), "gateway", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := testcluster.Eventually(t.Context(), 60*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "gateway", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		t.Fatalf("the leader did not recreate the gateway Deployment: %v\nwatch a:\n%s\nwatch b:\n%s", err, a.log, b.log)
	}
	wrote := func(w *watcher) bool {
		data, _ := exec.Command("cat", w.audit).Output()
		return strings.Contains(string(data), "gateway")
	}
	// The audit line follows the write's response, so the Deployment can be back a
	// moment before its line is in the file: wait for a line, then check whose.
	// A timeout is not checked here: the check below says whose line is missing.
	_ = testcluster.Eventually(t.Context(), 10*time.Second, func(context.Context) (bool, error) {
		return wrote(a) || wrote(b), nil
	})
	leader, other := a, b
	if wrote(b) {
		leader, other = b, a
	}
	if wrote(other) || !wrote(leader) {
		t.Fatalf("audit lines: a wrote %t, b wrote %t; want the leader's only\nwatch a:\n%s\nwatch b:\n%s", wrote(a), wrote(b), a.log, b.log)
	}

	// SIGKILL: the lease is not released; the other takes over when it expires
	// (controller-runtime's 15 s lease, 2 s retry period).
	killed := time.Now()
	_ = leader.cmd.Process.Signal(syscall.SIGKILL)
	second := waitHolder("the other leads after SIGKILL", 15*time.Second+2*time.Second+10*time.Second, func(h string) bool { return h != "" && h != first })
	t.Logf("after SIGKILL, %s leads after %s", second, time.Since(killed).Round(100*time.Millisecond))

	// SIGTERM: the leader releases the lease on the way out; a new process takes
	// over within the retry period.
	c3 := start("c")
	// c is up and retrying: client-go's leader election logs its first attempt
	// through the watch's logger.
	if err := testcluster.Eventually(t.Context(), 30*time.Second, func(context.Context) (bool, error) {
		return strings.Contains(c3.log.String(), "Attempting to acquire leader lease"), nil
	}); err != nil {
		t.Fatalf("watch c does not try to lead: %v\n%s", err, c3.log)
	}
	stopped := time.Now()
	_ = other.cmd.Process.Signal(syscall.SIGTERM)
	if err := other.cmd.Wait(); err != nil {
		t.Errorf("watch after SIGTERM: %v\n%s", err, other.log)
	}
	third := waitHolder("a new leader after SIGTERM", 10*time.Second, func(h string) bool { return h != "" && h != second })
	if took := time.Since(stopped); took > 6*time.Second {
		t.Errorf("after SIGTERM the lead passed in %s, want within the retry period (2 s) and some slack", took)
	}
	t.Logf("after SIGTERM, %s leads after %s", third, time.Since(stopped).Round(100*time.Millisecond))

	// The last watch stops cleanly: its Lease, in the platform's namespace, goes too.
	_ = c3.cmd.Process.Signal(syscall.SIGTERM)
	if err := c3.cmd.Wait(); err != nil {
		t.Errorf("watch c after SIGTERM: %v\n%s", err, c3.log)
	}
	if _, err := c.Kube.CoordinationV1().Leases(ns).Get(t.Context(), controller.LeaderElectionID, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the leader election Lease after the last watch stopped: %v, want gone", err)
	}
}
