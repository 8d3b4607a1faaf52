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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
)

// measureWatch installs tenants platforms of the tenant example with the built
// binary, one after the other, then measures the watch over them (watchTenants). With
// 0 tenants it watches one empty namespace: the floor.
func measureWatch(ctx context.Context, out io.Writer, cl *bench.Cluster, tmp, kubeconfig, tenantFile string, tenants, repairs int, addNamespace func(string)) error {
	bin, err := buildPlugin(ctx, tmp)
	if err != nil {
		return err
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
		if err := os.WriteFile(file, bench.MoveTo(data, "", ns), 0o644); err != nil {
			return err
		}
		logf("kubectl-onto apply -f %s (tenant %d of %d)", tenantFile, i+1, tenants)
		if _, err := bench.RunPlugin(ctx, bin, kubeconfig, "apply", "-f", file); err != nil {
			return err
		}
	}
	if tenants == 0 {
		ns := bench.NamespaceName("watch-empty")
		addNamespace(ns)
		if _, err := cl.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		namespaces = append(namespaces, ns)
	}
	return watchTenants(ctx, out, cl, bin, kubeconfig, namespaces, tenants, filepath.Base(tenantFile), repairs)
}

// watchTenants runs `kubectl-onto watch` of namespaces, which hold tenants platforms
// (of the file named label), as its own process, and prints what a platform team
// checks before leaving it running: how long a cold start takes until every platform
// has had its first pass and reports Ready (onto_platform_ready), the process's RSS
// and Go heap once synced, its API requests per idle pass (with --resync 20s, so a
// minute holds three passes of each platform) and how many write, and how long a
// deleted Deployment takes to come back (p50, p99 over repairs spread over the
// tenants). The namespaces are deleted at the end, while the watch still runs.
func watchTenants(ctx context.Context, out io.Writer, cl *bench.Cluster, bin, kubeconfig string, namespaces []string, tenants int, label string, repairs int) error {
	metricsAddr, err := freeAddress()
	if err != nil {
		return err
	}

	// Only the tenants' namespaces: other platforms of a shared cluster would count.
	const resync = 20 * time.Second
	watch := exec.CommandContext(ctx, bin, "watch", "--namespaces", strings.Join(namespaces, ","), "-v", "6", "--kubeconfig", kubeconfig,
		"--metrics-bind-address", metricsAddr, "--resync", resync.String())
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

	// Cold start: until the metrics say every platform is Ready (its first pass is
	// over); with no platform, until the metrics answer.
	logf("watch started; waiting until every platform reports ready")
	var coldStart time.Duration
	for {
		if m, err := scrape(ctx, metricsAddr); err == nil && readyPlatforms(m) == tenants {
			coldStart = time.Since(started)
			break
		}
		if time.Since(started) > 5*time.Minute {
			return fmt.Errorf("the platforms did not all report ready within 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The cold start's requests, and their rate: near the client's 50 QPS limit, the
	// limiter, not the API server or the passes, sets the cold start.
	coldCounts := classes(0)
	// Synced: the first passes are over once the requests pause for 5 s.
	// With many platforms the passes never pause for 5 s (100 tenants: a pass every
	// 0.2 s): one resync after the cold start, every platform has had its second pass.
	last, quietSince, readyAt := count(), time.Now(), time.Now()
	for time.Since(quietSince) < 5*time.Second && time.Since(readyAt) < resync+5*time.Second {
		time.Sleep(500 * time.Millisecond)
		if n := count(); n != last {
			last, quietSince = n, time.Now()
		}
	}
	rssSynced := rssOf(watch.Process.Pid)
	heapSynced := "unknown"
	if m, err := scrape(ctx, metricsAddr); err == nil {
		heapSynced = metricMiB(m, "go_memstats_heap_inuse_bytes")
	}

	const idle = 60 * time.Second
	logf("idle for %s (a pass of each platform every %s)", idle, resync)
	from := count()
	time.Sleep(idle)
	idleCounts := classes(from)
	passes := max(1, tenants) * int(idle/resync)

	fmt.Fprintf(out, "\nwatch --namespaces (theirs) --resync %s, the built binary as its own process, %d tenant platforms (%s):\n", resync, tenants, label)
	fmt.Fprintf(out, "  cold start to every platform Ready (first passes over): %s; once synced: RSS %s, Go heap in use %s\n", secs(coldStart), rssSynced, heapSynced)
	fmt.Fprintf(out, "  cold start: %d requests, %.1f per platform, %.1f per second: %s\n", coldCounts.Total(), float64(coldCounts.Total())/float64(max(1, tenants)), float64(coldCounts.Total())/coldStart.Seconds(), coldCounts)
	fmt.Fprintf(out, "  idle %s: %d requests, %.1f per platform pass, %d writes: %s\n", idle, idleCounts.Total(), float64(idleCounts.Total())/float64(passes), idleCounts.Writes(), idleCounts)
	if tenants == 0 {
		return nil
	}

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
	fmt.Fprintf(out, "  drift repair (Deployment deleted → recreated), %d repairs: p50 %s, p99 %s (%s)\n", len(took), secs(took[len(took)/2]), secs(p99), durations(took))
	fmt.Fprintf(out, "  RSS after the repairs: %s\n", rssOf(watch.Process.Pid))
	// The tenants go while the watch runs: their OntoPlatforms carry its finalizer,
	// which it drops for a namespace being deleted.
	logf("delete %d namespaces (the watch releases its finalizers)", len(namespaces))
	return cl.DeleteNamespaces(ctx, namespaces, 10*time.Minute)
}

// freeAddress is a local address no one listens on, for the watch's metrics.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// scrape reads the Prometheus text of the metrics server at addr.
func scrape(ctx context.Context, addr string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return "\n" + string(b), err
}

// readyPlatforms counts the onto_platform_ready samples at 1.
func readyPlatforms(metrics string) int {
	n := 0
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "onto_platform_ready{") && strings.HasSuffix(line, " 1") {
			n++
		}
	}
	return n
}

// metricMiB is the value of an unlabelled metric, in MiB.
func metricMiB(metrics, name string) string {
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return fmt.Sprintf("%.1f MiB", f/(1<<20))
			}
		}
	}
	return "unknown"
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
