/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
)

// scaleConfig is what -scale measures.
type scaleConfig struct {
	sizes      []int
	runs       int
	parallel   int
	tenantFile string
	repairs    int
	// watch measures `kubectl-onto watch` over each fleet before it is deleted.
	watch bool
	// watchBaseline: see config.
	watchBaseline string
	watchRounds   int
}

// parseSizes reads -scale's comma-separated fleet sizes.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-scale %q: want fleet sizes of at least 1, such as 10,50,100", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// measureScale measures, for each fleet size N, N tenant platforms of the tenant
// example in namespaces of their own, as a platform team running many tenants does:
//
//   - install from empty: `kubectl-onto apply -f DIR --parallel P` (every platform
//     Ready) beside `kubectl apply --server-side -f` of the same objects (writes
//     only: kubectl waits for nothing): wall, the CLI's peak RSS, requests by class,
//     and per platform p50/p95 of the plugin's own durations;
//   - plan of the N unchanged platforms beside `kubectl diff --server-side`, and a
//     no-op apply beside `kubectl apply --server-side`: medians of runs interleaved
//     rounds, peak RSS, requests by class (one counted run each);
//   - kube-apiserver and etcd RSS with the fleet installed;
//   - the watch over the fleet (watchTenants).
//
// Both installs run at -v 6, which is how requests are counted; the other timed runs
// log nothing. A fleet is deleted (all namespaces at once) before the next starts.
func measureScale(ctx context.Context, out io.Writer, cl *bench.Cluster, kubectl bench.Kubectl, tmp, kubeconfig string, sc scaleConfig, addNamespace func(string)) error {
	bin, err := buildPlugin(ctx, tmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nkubectl-onto at scale, %s, against %s (kubectl %s); tenant platforms of %s, --parallel %d; whole processes, start to exit\n",
		time.Now().Format(time.RFC3339), cl.Config.Host, kubectl.Path, filepath.Base(sc.tenantFile), sc.parallel)
	for i, n := range sc.sizes {
		if err := measureFleet(ctx, out, cl, kubectl, bin, tmp, kubeconfig, sc, n, i == 0, addNamespace); err != nil {
			return fmt.Errorf("fleet of %d: %w", n, err)
		}
	}
	return nil
}

// measureFleet measures a fleet of n tenants; warmUp runs one untimed round first.
func measureFleet(ctx context.Context, out io.Writer, cl *bench.Cluster, kubectl bench.Kubectl, bin, tmp, kubeconfig string, sc scaleConfig, n int, warmUp bool, addNamespace func(string)) error {
	dir := filepath.Join(tmp, fmt.Sprintf("fleet-%d", n))
	prefix := bench.NamespaceName("scale")
	logf("generate %d tenants in namespaces %s-000…", n, prefix)
	f, err := bench.WriteFleet(sc.tenantFile, dir, prefix, n)
	if err != nil {
		return err
	}
	for _, ns := range f.Namespaces {
		addNamespace(ns)
	}
	par := strconv.Itoa(sc.parallel)
	fmt.Fprintf(out, "\n== %d tenants, %d objects (%d per tenant, the CRD once) ==\n", n, f.Objects, (f.Objects-1)/n)

	logf("install %d tenants from empty: kubectl-onto apply -f %s --parallel %s", n, f.Dir, par)
	install, err := bench.MeasureCommand(ctx, nil, bin, "apply", "-f", f.Dir, "--parallel", par, "-o", "json", "-v", "6", "--kubeconfig", kubeconfig)
	if err != nil {
		return err
	}
	perPlatform, err := fleetDurations(install.Stdout)
	if err != nil {
		return err
	}
	installReq := bench.CountLogLines(strings.Split(string(install.Stderr), "\n"))
	controlPlane := controlPlaneRSS(kubeconfig)

	c, err := compareFleet(ctx, kubectl, bin, kubeconfig, f, sc.parallel, sc.runs, warmUp)
	if err != nil {
		return err
	}

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\twall\tper tenant\tpeak RSS\trequests\tper tenant\t")
	row := func(name string, wall time.Duration, rss int64, req bench.Counts) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f\t\n", name, secs(wall), secs(wall/time.Duration(n)), mib(rss), req.Total(), float64(req.Total())/float64(n))
	}
	row("kubectl-onto apply, from empty (all Ready)", install.Wall, install.PeakRSS, installReq)
	// kubectl's install comes last (below), once the fleet is gone; its row is printed
	// after the watch.
	row("kubectl-onto plan, unchanged (median)", bench.Median(c.plan), c.planRSS, c.planReq)
	row("kubectl diff --server-side (median)", bench.Median(c.diff), c.diffRSS, c.diffReq)
	row("kubectl-onto apply, no-op (median)", bench.Median(c.noop), c.noopRSS, c.noopReq)
	row("kubectl apply --server-side, unchanged (median)", bench.Median(c.apply), c.applyRSS, c.applyReq)
	if err := tw.Flush(); err != nil {
		return err
	}
	slices.Sort(perPlatform)
	fmt.Fprintf(out, "install: per platform (its own apply, queued behind --parallel): p50 %s, p95 %s, max %s\n",
		secs(perPlatform[len(perPlatform)/2]), secs(perPlatform[min(len(perPlatform)-1, len(perPlatform)*95/100)]), secs(perPlatform[len(perPlatform)-1]))
	fmt.Fprintf(out, "install requests: %s\n", installReq)
	fmt.Fprintf(out, "plan requests per rendered kind: %.1f (%d requests, %d kinds a tenant renders, its OntoPlatform's included)\n",
		float64(c.planReq.Total())/float64(f.Kinds), c.planReq.Total(), f.Kinds)
	fmt.Fprintf(out, "ratios (medians of %d interleaved rounds): plan / kubectl diff %.2f; no-op apply / kubectl apply %.2f\n",
		sc.runs, bench.Ratio(bench.Median(c.plan), bench.Median(c.diff)), bench.Ratio(bench.Median(c.noop), bench.Median(c.apply)))
	fmt.Fprintf(out, "  runs, plan:         %s\n  runs, kubectl diff: %s\n  runs, no-op apply:  %s\n  runs, kubectl apply: %s\n",
		durations(c.plan), durations(c.diff), durations(c.noop), durations(c.apply))
	fmt.Fprintf(out, "  requests, plan:          %s\n  requests, kubectl diff:  %s\n  requests, no-op apply:   %s\n  requests, kubectl apply: %s\n",
		c.planReq, c.diffReq, c.noopReq, c.applyReq)
	fmt.Fprintf(out, "control plane with the fleet installed: %s\n", controlPlane)

	if sc.watch && sc.watchBaseline != "" {
		if err := compareColdStarts(ctx, out, bin, sc.watchBaseline, kubeconfig, f.Namespaces, n, sc.watchRounds, []bool{false, true}); err != nil {
			return err
		}
	}
	if sc.watch {
		// The scale cluster is the bench's own: -A watches only the fleet.
		if err := watchTenants(ctx, out, cl, bin, kubeconfig, f.Namespaces, n, filepath.Base(sc.tenantFile), sc.repairs, []bool{false, true}); err != nil {
			return err
		}
	} else {
		logf("delete %d namespaces", n)
		if err := cl.DeleteNamespaces(ctx, f.Namespaces, 15*time.Minute); err != nil {
			return err
		}
	}

	logf("install the same objects from empty with kubectl apply --server-side (-v=6)")
	kinstall, err := kubectl.Apply(ctx, f.Manifest, true)
	if err != nil {
		return err
	}
	logf("kubectl wait: the Deployments Available, then the pods Ready")
	kwait, err := kubectl.WaitReady(ctx, "app.kubernetes.io/managed-by=kubectl-onto")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "kubectl apply --server-side -f, from empty (writes only, waits for nothing): wall %s (%s per tenant), peak RSS %s, %s (%.1f per tenant)\n",
		secs(kinstall.Wall), secs(kinstall.Wall/time.Duration(n)), mib(kinstall.PeakRSS), kinstall.Requests, float64(kinstall.Requests.Total())/float64(n))
	fmt.Fprintf(out, "  then kubectl wait (Deployments Available, pods Ready): %s; apply + wait %s\n", secs(kwait), secs(kinstall.Wall+kwait))
	fmt.Fprintf(out, "  kubectl-onto install / kubectl apply: wall %.2f, requests %.2f, peak RSS %.2f; / kubectl apply + wait: wall %.2f\n",
		bench.Ratio(install.Wall, kinstall.Wall), float64(installReq.Total())/float64(max(1, kinstall.Requests.Total())), float64(install.PeakRSS)/float64(max(1, kinstall.PeakRSS)),
		bench.Ratio(install.Wall, kinstall.Wall+kwait))
	logf("delete %d namespaces", n)
	return cl.DeleteNamespaces(ctx, f.Namespaces, 15*time.Minute)
}

// fleetComparison holds the interleaved runs over one installed fleet.
type fleetComparison struct {
	plan, diff, noop, apply             []time.Duration
	planRSS, diffRSS, noopRSS, applyRSS int64 // the largest of the timed runs
	planReq, diffReq, noopReq, applyReq bench.Counts
}

// compareFleet times, as whole processes in turn, a plan of the fleet's unchanged
// platforms, kubectl diff of its objects, a no-op apply and kubectl apply, runs rounds
// (after an untimed one with warmUp: kubectl's discovery cache is shared by every
// fleet, and the install filled the render cache); then counts each one's requests in
// a -v 6 run.
func compareFleet(ctx context.Context, kubectl bench.Kubectl, bin, kubeconfig string, f *bench.Fleet, parallel, runs int, warmUp bool) (*fleetComparison, error) {
	c := &fleetComparison{}
	par := strconv.Itoa(parallel)
	planArgs := []string{"plan", "-f", f.Dir, "--parallel", par, "--detailed-exitcode", "--kubeconfig", kubeconfig}
	applyArgs := []string{"apply", "-f", f.Dir, "--parallel", par, "--kubeconfig", kubeconfig}
	first := 0
	if warmUp {
		first = -1
	}
	for i := first; i < runs; i++ {
		if i < 0 {
			logf("warm-up round (kubectl's discovery cache)")
		} else {
			logf("round %d/%d over %d platforms", i+1, runs, len(f.Namespaces))
		}
		p, err := bench.MeasureCommand(ctx, nil, bin, planArgs...)
		if err != nil {
			return nil, fmt.Errorf("plan of the installed fleet: %w", err)
		}
		kd, err := kubectl.Diff(ctx, f.Manifest, false)
		if err != nil {
			return nil, err
		}
		noop, err := bench.MeasureCommand(ctx, nil, bin, applyArgs...)
		if err != nil {
			return nil, err
		}
		ka, err := kubectl.Apply(ctx, f.Manifest, false)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			continue
		}
		c.plan, c.diff, c.noop, c.apply = append(c.plan, p.Wall), append(c.diff, kd.Wall), append(c.noop, noop.Wall), append(c.apply, ka.Wall)
		c.planRSS, c.diffRSS = max(c.planRSS, p.PeakRSS), max(c.diffRSS, kd.PeakRSS)
		c.noopRSS, c.applyRSS = max(c.noopRSS, noop.PeakRSS), max(c.applyRSS, ka.PeakRSS)
	}
	logf("count requests (-v 6 / -v=6)")
	pr, err := bench.MeasureCommand(ctx, nil, bin, append(planArgs, "-v", "6")...)
	if err != nil {
		return nil, err
	}
	nr, err := bench.MeasureCommand(ctx, nil, bin, append(applyArgs, "-v", "6")...)
	if err != nil {
		return nil, err
	}
	c.planReq = bench.CountLogLines(strings.Split(string(pr.Stderr), "\n"))
	c.noopReq = bench.CountLogLines(strings.Split(string(nr.Stderr), "\n"))
	if w := c.noopReq.Writes(); w != 0 {
		return nil, fmt.Errorf("no-op apply of the fleet sent %d writes (%s)", w, c.noopReq)
	}
	kd, err := kubectl.Diff(ctx, f.Manifest, true)
	if err != nil {
		return nil, err
	}
	ka, err := kubectl.Apply(ctx, f.Manifest, true)
	if err != nil {
		return nil, err
	}
	c.diffReq, c.applyReq = kd.Requests, ka.Requests
	return c, nil
}

// fleetDurations reads each platform's duration from the summary a multi-platform
// `apply -o json` prints as its last line; a platform that did not succeed is an error.
func fleetDurations(stdout []byte) ([]time.Duration, error) {
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	var summary struct {
		Platforms []struct {
			Namespace, Name, Result, Error string
			DurationSeconds                float64
		}
		Success bool
	}
	if err := json.Unmarshal(lines[len(lines)-1], &summary); err != nil || len(summary.Platforms) == 0 {
		return nil, fmt.Errorf("no fleet summary on the last line of apply -o json (%v): %.200s", err, lines[len(lines)-1])
	}
	var out []time.Duration
	for _, p := range summary.Platforms {
		if p.Result != "succeeded" {
			return nil, fmt.Errorf("platform %s/%s: %s %s", p.Namespace, p.Name, p.Result, p.Error)
		}
		out = append(out, time.Duration(p.DurationSeconds*float64(time.Second)))
	}
	return out, nil
}

// controlPlaneRSS is the RSS of the test cluster's kube-apiserver and etcd, read from
// the PID files beside its kubeconfig (hack/testcluster's state dir).
func controlPlaneRSS(kubeconfig string) string {
	var parts []string
	for _, name := range []string{"kube-apiserver", "etcd"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(kubeconfig), "pids", name+".pid"))
		pid, perr := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || perr != nil {
			parts = append(parts, name+" unknown (no PID file)")
			continue
		}
		parts = append(parts, name+" "+memoryOf(pid))
	}
	return strings.Join(parts, ", ")
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
