/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
)

// measureWatch installs tenants platforms of the tenant example with the built
// binary, runs `kubectl-onto watch` of their namespaces as its own process, and prints what a platform
// team checks before leaving it running: the process's RSS once synced and idle, its
// API requests per minute while nothing changes (and how many write), and how long a
// deleted Deployment takes to come back (p50, p99 over repairs spread over the
// tenants).
func measureWatch(ctx context.Context, out io.Writer, cl *bench.Cluster, tmp, kubeconfig, tenantFile string, tenants, repairs int, addNamespace func(string)) error {
	bin := filepath.Join(tmp, "kubectl-onto")
	logf("build %s", bin)
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/kubectl-onto").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	data, err := os.ReadFile(tenantFile)
	if err != nil {
		return err
	}
	var namespaces []string
	for i := range tenants {
		ns := bench.NamespaceName(fmt.Sprintf("tenant-%03d", i))
		addNamespace(ns)
		namespaces = append(namespaces, ns)
		file := filepath.Join(tmp, ns+".yaml")
		moved := regexp.MustCompile(`(?m)^  namespace: .*$`).ReplaceAllLiteralString(string(data), "  namespace: "+ns)
		if err := os.WriteFile(file, []byte(moved), 0o644); err != nil {
			return err
		}
		logf("kubectl-onto apply -f %s (tenant %d of %d)", tenantFile, i+1, tenants)
		if _, err := bench.RunPlugin(ctx, bin, kubeconfig, "apply", "-f", file); err != nil {
			return err
		}
	}

	// Only the tenants' namespaces: other platforms of a shared cluster would count.
	watch := exec.CommandContext(ctx, bin, "watch", "--namespaces", strings.Join(namespaces, ","), "-v", "6", "--kubeconfig", kubeconfig)
	stderr, err := watch.StderrPipe()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var requests []string // "VERB url" of every response, in order
	started := time.Now()
	if err := watch.Start(); err != nil {
		return err
	}
	defer func() {
		_ = watch.Process.Signal(os.Interrupt)
		_ = watch.Wait()
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, "msg=Response") {
				continue
			}
			mu.Lock()
			requests = append(requests, line)
			mu.Unlock()
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(requests)
	}
	classes := func(from int) bench.Counts {
		mu.Lock()
		defer mu.Unlock()
		return bench.CountLogLines(requests[from:])
	}
	// Synced: the first passes are over once the requests pause for 5 s.
	logf("watch started; waiting until it is quiet")
	last, quietSince := 0, time.Now()
	for time.Since(quietSince) < 5*time.Second {
		time.Sleep(500 * time.Millisecond)
		if n := count(); n != last {
			last, quietSince = n, time.Now()
		}
		if time.Since(started) > 5*time.Minute {
			return fmt.Errorf("watch did not quieten within 5 minutes")
		}
	}
	synced := time.Since(started) - 5*time.Second
	rssSynced := rssOf(watch.Process.Pid)

	const idle = 60 * time.Second
	logf("idle for %s", idle)
	from := count()
	time.Sleep(idle)
	idleCounts := classes(from)

	logf("%d repairs: delete a tenant's gateway Deployment, time until it is back", repairs)
	var took []time.Duration
	for i := range repairs {
		ns := namespaces[i%len(namespaces)]
		deps := cl.Kube.AppsV1().Deployments(ns)
		old, err := deps.Get(ctx, "gateway", metav1.GetOptions{})
		if err != nil {
			return err
		}
		start := time.Now()
		if err := deps.Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
			return err
		}
		for {
			d, err := deps.Get(ctx, "gateway", metav1.GetOptions{})
			if err == nil && d.UID != old.UID {
				break
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			if time.Since(start) > 2*time.Minute {
				return fmt.Errorf("gateway of %s not recreated within 2 minutes", ns)
			}
			time.Sleep(20 * time.Millisecond)
		}
		took = append(took, time.Since(start))
		time.Sleep(2 * time.Second) // let the pass settle before the next one
	}
	slices.Sort(took)
	p99 := took[min(len(took)-1, len(took)*99/100)]
	fmt.Fprintf(out, "\nwatch --namespaces (theirs), the built binary as its own process, %d tenant platforms (%s):\n", tenants, filepath.Base(tenantFile))
	fmt.Fprintf(out, "  synced (first passes over) after %s; RSS %s\n", secs(synced), rssSynced)
	fmt.Fprintf(out, "  idle %s (the periodic pass is every 5 min): %.0f requests/min, %d writes: %s\n", idle, float64(idleCounts.Total())*float64(time.Minute)/float64(idle), idleCounts.Writes(), idleCounts)
	fmt.Fprintf(out, "  drift repair (Deployment deleted → recreated), %d repairs: p50 %s, p99 %s (%s)\n", len(took), secs(took[len(took)/2]), secs(p99), durations(took))
	fmt.Fprintf(out, "  RSS after the repairs: %s\n", rssOf(watch.Process.Pid))
	// The tenants go while the watch runs: their OntoPlatforms carry its finalizer,
	// which it drops for a namespace being deleted.
	for _, ns := range namespaces {
		logf("delete namespace %s (the watch releases its finalizer)", ns)
		if err := cl.DeleteNamespace(ctx, ns, 3*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// rssOf is a process's resident set size, from /proc.
func rssOf(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
		}
	}
	return "unknown"
}
