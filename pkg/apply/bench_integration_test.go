/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// The benchmarks of plan and apply of the production example against the test
// cluster, and of kubectl on the same objects. Each works in a namespace of its own,
// deleted (and waited for) when it ends: the test cluster's GPU node fits only two
// production platforms. `go run ./hack/bench` prints the same figures side by side
// as medians and ratios.

var productionExample = filepath.Join("..", "..", "examples", "platform.yaml")

// benchCluster connects to the test cluster, or skips b without one.
func benchCluster(b *testing.B) *bench.Cluster {
	b.Helper()
	c := testcluster.New(b)
	cl, err := bench.Connect(c.Kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	crd := filepath.Join("..", "..", "hack", "testcluster", "manifests", "servicemonitor-crd.yaml")
	if err := cl.EnsureCRD(b.Context(), crd); err != nil {
		b.Fatal(err)
	}
	return cl
}

// dropNamespaceAtEnd deletes ns when b ends and waits until it is gone.
func dropNamespaceAtEnd(b *testing.B, cl *bench.Cluster, ns string) {
	b.Cleanup(func() {
		// b.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := cl.DeleteNamespace(ctx, ns, 3*time.Minute); err != nil {
			b.Error(err)
		}
	})
}

// installedProduction installs the production example into a fresh namespace and
// returns what it applied.
func installedProduction(b *testing.B) (*bench.Cluster, *plan.Desired) {
	b.Helper()
	cl := benchCluster(b)
	ns := testcluster.UniqueName(b, "b")
	dropNamespaceAtEnd(b, cl, ns)
	d, err := bench.Desired(productionExample, ns)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bench.Apply(b.Context(), cl.Config, d, bench.Options()); err != nil {
		b.Fatalf("install: %v", err)
	}
	return cl, d
}

// reportRequests reports each class of request as a metric per operation.
func reportRequests(b *testing.B, c bench.Counts, ops int) {
	b.Helper()
	for verb, n := range c {
		unit := strings.ToLower(strings.ReplaceAll(verb, "(dry-run)", "-dryrun")) + "-req/op"
		b.ReportMetric(float64(n)/float64(ops), unit)
	}
	b.ReportMetric(float64(c.Total())/float64(ops), "req/op")
}

// add adds c to total.
func add(total, c bench.Counts) {
	for k, v := range c {
		total[k] += v
	}
}

// kubectlManifest writes the objects of d, as apply writes them, to a file for kubectl.
func kubectlManifest(b *testing.B, cl *bench.Cluster, d *plan.Desired) (bench.Kubectl, string) {
	b.Helper()
	path := os.Getenv("ONTO_KUBECTL")
	if path == "" {
		path = filepath.Join(filepath.Dir(cl.Kubeconfig), "bin", "kubectl")
	}
	if _, err := os.Stat(path); err != nil {
		mustrun.Skipf(b, "no kubectl (set ONTO_KUBECTL): %v", err)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "objects.yaml")
	if err := bench.WriteManifest(file, d); err != nil {
		b.Fatal(err)
	}
	return bench.Kubectl{Path: path, Kubeconfig: cl.Kubeconfig, CacheDir: filepath.Join(dir, "cache")}, file
}

// BenchmarkPlanProduction: plan of the installed, unchanged production example, with
// fresh clients as one `kubectl onto plan` has (render not included).
func BenchmarkPlanProduction(b *testing.B) {
	cl, d := installedProduction(b)
	total := bench.Counts{}
	ops := 0
	for b.Loop() {
		r, err := bench.Plan(b.Context(), cl.Config, d)
		if err != nil {
			b.Fatal(err)
		}
		if r.Plan.HasChanges() {
			b.Fatalf("plan of the installed platform has changes: %+v", r.Plan.Summary)
		}
		add(total, r.Requests)
		ops++
	}
	reportRequests(b, total, ops)
}

// BenchmarkNoopApplyProduction: plan and apply of the installed, unchanged production
// example, which must write nothing.
func BenchmarkNoopApplyProduction(b *testing.B) {
	cl, d := installedProduction(b)
	total := bench.Counts{}
	ops := 0
	for b.Loop() {
		r, err := bench.Apply(b.Context(), cl.Config, d, bench.Options())
		if err != nil {
			b.Fatal(err)
		}
		if n := r.Requests.Writes(); n != 0 {
			b.Fatalf("no-op apply sent %d writes: %s", n, r.Requests)
		}
		add(total, r.Requests)
		ops++
	}
	reportRequests(b, total, ops)
}

// BenchmarkKubectlDiffServerSide: `kubectl diff --server-side` on the same objects as
// BenchmarkPlanProduction, installed and unchanged. Requests are counted from one
// more run at -v=6, outside the timing.
func BenchmarkKubectlDiffServerSide(b *testing.B) {
	cl, d := installedProduction(b)
	k, file := kubectlManifest(b, cl, d)
	if _, err := k.Diff(b.Context(), file, false); err != nil { // warm the discovery cache
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := k.Diff(b.Context(), file, false); err != nil {
			b.Fatal(err)
		}
	}
	r, err := k.Diff(b.Context(), file, true)
	if err != nil {
		b.Fatal(err)
	}
	reportRequests(b, r.Requests, 1)
}

// BenchmarkKubectlApplyServerSide: `kubectl apply --server-side` (field manager
// kubectl-onto) of the same objects as BenchmarkNoopApplyProduction, a no-op.
func BenchmarkKubectlApplyServerSide(b *testing.B) {
	cl, d := installedProduction(b)
	k, file := kubectlManifest(b, cl, d)
	if _, err := k.Apply(b.Context(), file, false); err != nil { // warm up
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := k.Apply(b.Context(), file, false); err != nil {
			b.Fatal(err)
		}
	}
	r, err := k.Apply(b.Context(), file, true)
	if err != nil {
		b.Fatal(err)
	}
	reportRequests(b, r.Requests, 1)
}

// BenchmarkInstallProduction: the production example from empty (a fresh namespace
// per iteration) to Ready. Besides the time, it reports per plane how long apply kept
// waiting after the plane's slowest workload was seen ready (the watch's overhead),
// in seconds. Deleting the namespace after each iteration is not timed. Run it with
// a small -benchtime, e.g. 3x.
func BenchmarkInstallProduction(b *testing.B) {
	cl := benchCluster(b)
	beyond := map[string]time.Duration{}
	total := bench.Counts{}
	ops := 0
	for b.Loop() {
		ns := testcluster.UniqueName(b, "b")
		d, err := bench.Desired(productionExample, ns)
		if err != nil {
			b.Fatal(err)
		}
		r, err := bench.Apply(b.Context(), cl.Config, d, bench.Options())
		b.StopTimer()
		dropNamespaceAtEnd(b, cl, ns) // in case of failure below
		if err != nil {
			b.Fatalf("install: %v", err)
		}
		planes, err := r.Planes()
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range planes {
			if p.Workloads > 0 {
				beyond[p.Name] += p.Beyond()
			}
		}
		add(total, r.Requests)
		ops++
		if err := cl.DeleteNamespace(b.Context(), ns, 3*time.Minute); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	for plane, d := range beyond {
		b.ReportMetric(d.Seconds()/float64(ops), plane+"-beyond-rollout-s/op")
	}
	reportRequests(b, total, ops)
}
