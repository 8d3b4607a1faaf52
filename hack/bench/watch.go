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
	"regexp"
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
// binary, in one run, then measures the watch over them (watchTenants). With
// 0 tenants it watches one empty namespace: the floor.
func measureWatch(ctx context.Context, out io.Writer, cl *bench.Cluster, tmp, kubeconfig, tenantFile string, tenants, repairs int, baseline string, rounds int, addNamespace func(string)) error {
	bin, err := buildPlugin(ctx, tmp)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(tenantFile)
	if err != nil {
		return err
	}
	// One directory of tenants, installed by one apply --parallel 16: 100 tenants
	// one after the other took 27 minutes, this about 4.5.
	var namespaces []string
	dir := filepath.Join(tmp, "watch-tenants")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range tenants {
		ns := bench.NamespaceName(fmt.Sprintf("tenant-%03d", i))
		addNamespace(ns)
		namespaces = append(namespaces, ns)
		if err := os.WriteFile(filepath.Join(dir, ns+".yaml"), bench.MoveTo(data, "", ns), 0o644); err != nil {
			return err
		}
	}
	if tenants > 0 {
		logf("kubectl-onto apply -f %s --parallel 16 (%d tenants of %s)", dir, tenants, tenantFile)
		if _, err := bench.RunPlugin(ctx, bin, kubeconfig, "apply", "-f", dir, "--parallel", "16"); err != nil {
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
	if baseline != "" && tenants > 0 {
		if err := compareColdStarts(ctx, out, bin, baseline, kubeconfig, namespaces, tenants, max(1, rounds), []bool{false}); err != nil {
			return err
		}
	}
	// A shared cluster's other platforms: only the tenants' namespaces are watched.
	return watchTenants(ctx, out, cl, bin, kubeconfig, namespaces, tenants, filepath.Base(tenantFile), repairs, []bool{false})
}

// watchTenants runs `kubectl-onto watch` of namespaces, which hold tenants platforms
// (of the file named label), as its own process, and prints what a platform team
// checks before leaving it running: how long a cold start takes until every platform
// has had its first pass and reports Ready (onto_platform_ready), the process's RSS
// and Go heap once synced, its API requests per idle pass (with --resync 20s, so a
// minute holds three passes of each platform) and how many write, and how long a
// deleted Deployment takes to come back (p50, p99 over repairs spread over the
// tenants). The namespaces are deleted at the end, while the watch still runs.
//
// scopes are the watches measured one after the other: false watches the tenants'
// namespaces by name (--namespaces: one informer per kind and namespace), true all
// of them (-A: one per kind, as a platform team runs it for many tenants; only on a
// cluster of the bench's own, as it reconciles every platform there). Only the
// tenants' platforms count either way; the last watch deletes the namespaces.
func watchTenants(ctx context.Context, out io.Writer, cl *bench.Cluster, bin, kubeconfig string, namespaces []string, tenants int, label string, repairs int, scopes []bool) error {
	for i, all := range scopes {
		if err := watchScope(ctx, out, cl, bin, kubeconfig, namespaces, tenants, label, repairs, all, i == len(scopes)-1); err != nil {
			return err
		}
	}
	return nil
}

// watchScope is watchTenants' measure of one watch, of namespaces by name or with
// allNamespaces of every namespace; with deleteAfter, it deletes the namespaces while it
// runs.
func watchScope(ctx context.Context, out io.Writer, cl *bench.Cluster, bin, kubeconfig string, namespaces []string, tenants int, label string, repairs int, allNamespaces, deleteAfter bool) error {
	const resync = 20 * time.Second
	w, err := launchWatch(ctx, bin, kubeconfig, namespaces, allNamespaces, resync)
	if err != nil {
		return err
	}
	defer w.stop()
	count, classes := w.count, w.classes

	// Cold start: until the metrics say every platform is Ready (its first pass is
	// over); with no platform, until the metrics answer.
	logf("watch started; waiting until every platform reports ready")
	coldStart, err := w.untilReady(ctx, tenants)
	if err != nil {
		return err
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
	watch, metricsAddr := w.cmd, w.metricsAddr
	rssSynced := memoryOf(watch.Process.Pid)
	heapSynced := "unknown"
	if m, err := scrape(ctx, metricsAddr); err == nil {
		heapSynced = metricMiB(m, "go_memstats_heap_inuse_bytes")
	}

	const idle = 60 * time.Second
	logf("idle for %s (a pass of each platform every %s)", idle, resync)
	from, idleFrom := count(), time.Now()
	// RSS read each second of the idle minute: its highest, as a memory limit meets it.
	var idleMax float64
	for time.Since(idleFrom) < idle {
		time.Sleep(time.Second)
		idleMax = max(idleMax, procStatusMiB(watch.Process.Pid, "VmRSS"))
	}
	idleCounts := classes(from)
	passes := max(1, tenants) * int(idle/resync)

	scope := "--namespaces (theirs)"
	if allNamespaces {
		scope = "-A"
	}
	fmt.Fprintf(out, "\nwatch %s --resync %s, the built binary as its own process, %d tenant platforms (%s):\n", scope, resync, tenants, label)
	fmt.Fprintf(out, "  cold start to every platform Ready (first passes over): %s; once synced: RSS %s, Go heap in use %s\n", secs(coldStart), rssSynced, heapSynced)
	fmt.Fprintf(out, "  RSS over the idle minute, highest: %.1f MiB; peak since start (VmHWM, the first passes included): %.1f MiB\n", idleMax, procStatusMiB(watch.Process.Pid, "VmHWM"))
	fmt.Fprintf(out, "  live heap after each GC of the idle minute (gctrace): %s\n", w.liveSince(idleFrom))
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
	fmt.Fprintf(out, "  RSS after the repairs: %s\n", memoryOf(watch.Process.Pid))
	if !deleteAfter {
		return nil
	}
	// The tenants go while the watch runs: their OntoPlatforms carry its finalizer,
	// which it drops for a namespace being deleted.
	logf("delete %d namespaces (the watch releases its finalizers)", len(namespaces))
	return cl.DeleteNamespaces(ctx, namespaces, 10*time.Minute)
}

// runningWatch is `kubectl-onto watch` started by launchWatch, its API requests
// counted from its -v 6 log.
type runningWatch struct {
	cmd         *exec.Cmd
	metricsAddr string
	started     time.Time
	// namespaces are the tenants', whose platforms untilReady counts.
	namespaces map[string]bool
	mu         sync.Mutex
	requests   []string // "VERB url" of every response, in order
	lives      []liveHeap
}

// liveHeap is the heap marked live by one GC (GODEBUG=gctrace=1: "A->B->C MB", C).
type liveHeap struct {
	at time.Time
	mb int
}

// gcLive matches gctrace's heap sizes at the start and end of a GC and marked live.
var gcLive = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// launchWatch starts bin's watch of namespaces with --resync resync, serving metrics
// on a free local port.
func launchWatch(ctx context.Context, bin, kubeconfig string, namespaces []string, allNamespaces bool, resync time.Duration) (*runningWatch, error) {
	metricsAddr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	scope := []string{"--namespaces", strings.Join(namespaces, ",")}
	if allNamespaces {
		scope = []string{"-A"}
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"watch", "-v", "6", "--kubeconfig", kubeconfig,
		"--metrics-bind-address", metricsAddr, "--resync", resync.String()}, scope...)...)
	// gctrace: the heap each GC marks live, a figure that does not depend on when the
	// metrics are read within the GC cycle as heap in use does.
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	w := &runningWatch{cmd: cmd, metricsAddr: metricsAddr, started: time.Now(), namespaces: map[string]bool{}}
	for _, ns := range namespaces {
		w.namespaces[ns] = true
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "gc ") {
				if m := gcLive.FindStringSubmatch(line); m != nil {
					mb, _ := strconv.Atoi(m[3])
					w.mu.Lock()
					w.lives = append(w.lives, liveHeap{at: time.Now(), mb: mb})
					w.mu.Unlock()
				}
				continue
			}
			if !strings.Contains(line, "msg=Response") {
				continue
			}
			w.mu.Lock()
			w.requests = append(w.requests, line)
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// liveSince is the heap marked live by the GCs since from: "min–max MB over N GCs".
func (w *runningWatch) liveSince(from time.Time) string {
	lo, hi, n := w.liveRange(from)
	if n == 0 {
		return "no GC"
	}
	return fmt.Sprintf("%d–%d MB over %d GCs", lo, hi, n)
}

// lastLive is the heap the last GC marked live (-1 before the first).
func (w *runningWatch) lastLive() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lives) == 0 {
		return -1
	}
	return w.lives[len(w.lives)-1].mb
}

// liveRange is the least and most heap marked live by the n GCs since from.
func (w *runningWatch) liveRange(from time.Time) (lo, hi, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lives {
		if l.at.Before(from) {
			continue
		}
		if n == 0 || l.mb < lo {
			lo = l.mb
		}
		hi = max(hi, l.mb)
		n++
	}
	return lo, hi, n
}

// stop interrupts the watch (Ctrl-C) and waits for it to exit.
func (w *runningWatch) stop() {
	_ = w.cmd.Process.Signal(os.Interrupt)
	_ = w.cmd.Wait()
}

func (w *runningWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.requests)
}

// classes counts the requests from the from-th on, by class.
func (w *runningWatch) classes(from int) bench.Counts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bench.CountLogLines(w.requests[from:])
}

// untilReady waits until the metrics report tenants platforms ready (with none,
// until they answer) and returns the time since the start; 5 minutes at most.
func (w *runningWatch) untilReady(ctx context.Context, tenants int) (time.Duration, error) {
	for {
		if m, err := scrape(ctx, w.metricsAddr); err == nil && readyPlatforms(m, w.namespaces) == tenants {
			return time.Since(w.started), nil
		}
		if time.Since(w.started) > 5*time.Minute {
			return 0, fmt.Errorf("the platforms did not all report ready within 5 minutes")
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// compareColdStarts times the watch's cold start over the fleet, bin beside
// baseline (another build), in rounds interleaved rounds after one untimed warm-up
// (the first watch adds its finalizer to every OntoPlatform): wall until every
// platform reports ready, and its requests; then, after 25 s with no pass due, the
// process's RSS and the least heap a GC of those 25 s marked live (with none, the
// last GC's). scopes: as watchTenants'.
func compareColdStarts(ctx context.Context, out io.Writer, bin, baseline, kubeconfig string, namespaces []string, tenants, rounds int, scopes []bool) error {
	type result struct {
		cold      time.Duration
		req       bench.Counts
		rss, live float64 // MiB, MB
	}
	run := func(b string, all bool) (result, error) {
		w, err := launchWatch(ctx, b, kubeconfig, namespaces, all, 5*time.Minute)
		if err != nil {
			return result{}, err
		}
		defer w.stop()
		d, err := w.untilReady(ctx, tenants)
		if err != nil {
			return result{}, err
		}
		settled := time.Now()
		time.Sleep(25 * time.Second)
		live, _, n := w.liveRange(settled)
		if n == 0 {
			// No GC in those 25 s (no pass is due for 5 minutes): the last one's.
			live = w.lastLive()
		}
		return result{cold: d, req: w.classes(0), rss: procStatusMiB(w.cmd.Process.Pid, "VmRSS"), live: float64(live)}, nil
	}
	logf("watch cold start: warm-up")
	if _, err := run(bin, false); err != nil {
		return err
	}
	for _, all := range scopes {
		var ours, theirs []result
		for r := range rounds {
			for i := range 2 {
				// Each round alternates which goes first.
				b := bin
				if (r+i)%2 == 1 {
					b = baseline
				}
				logf("watch cold start (all namespaces %v), round %d of %d: %s", all, r+1, rounds, b)
				res, err := run(b, all)
				if err != nil {
					return err
				}
				if b == bin {
					ours = append(ours, res)
				} else {
					theirs = append(theirs, res)
				}
			}
		}
		scope := "--namespaces (theirs)"
		if all {
			scope = "-A"
		}
		fmt.Fprintf(out, "\nwatch %s over %d platforms, this build beside %s, %d interleaved rounds (whole processes; medians):\n", scope, tenants, baseline, rounds)
		// Medians of one side's runs; the requests are its last run's.
		summary := func(rs []result) (colds []time.Duration, rss, live float64, req int) {
			var rsss, lives []float64
			for _, r := range rs {
				colds, rsss, lives = append(colds, r.cold), append(rsss, r.rss), append(lives, r.live)
			}
			return colds, medianOf(rsss), medianOf(lives), rs[len(rs)-1].req.Total()
		}
		oursCold, oursRSS, oursLive, oursReq := summary(ours)
		theirsCold, theirsRSS, theirsLive, theirsReq := summary(theirs)
		fmt.Fprintf(out, "  this build cold start %s (%s), %d requests; 25 s later: RSS %.1f MiB, live heap %.0f MB\n", secs(bench.Median(oursCold)), durations(oursCold), oursReq, oursRSS, oursLive)
		fmt.Fprintf(out, "  baseline   cold start %s (%s), %d requests; 25 s later: RSS %.1f MiB, live heap %.0f MB\n", secs(bench.Median(theirsCold)), durations(theirsCold), theirsReq, theirsRSS, theirsLive)
		fmt.Fprintf(out, "  ratios: cold start %.2f, RSS %.2f, live heap %.2f\n", bench.Ratio(bench.Median(oursCold), bench.Median(theirsCold)), oursRSS/theirsRSS, oursLive/theirsLive)
	}
	return nil
}

// medianOf is the median of vs (the lower middle of an even count).
func medianOf(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	return s[(len(s)-1)/2]
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

// readyPlatforms counts the onto_platform_ready samples at 1 of platforms in namespaces.
func readyPlatforms(metrics string, namespaces map[string]bool) int {
	n := 0
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "onto_platform_ready{") || !strings.HasSuffix(line, " 1") {
			continue
		}
		_, rest, ok := strings.Cut(line, `namespace="`)
		ns, _, _ := strings.Cut(rest, `"`)
		if ok && namespaces[ns] {
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

// procStatusMiB is one of a process's memory figures in /proc/PID/status (VmRSS,
// VmHWM, RssAnon, RssFile), in MiB; 0 if unreadable.
func procStatusMiB(pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// memoryOf is a process's resident set size, and of it the anonymous memory (heap,
// stacks) and the mapped file pages (the executable's code, which the kernel can
// drop and read again).
func memoryOf(pid int) string {
	rss := procStatusMiB(pid, "VmRSS")
	if rss == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB (anonymous %.1f, file %.1f)", rss, procStatusMiB(pid, "RssAnon"), procStatusMiB(pid, "RssFile"))
}
