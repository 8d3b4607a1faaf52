/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command bench prints the speed figures of plan and apply of the production example
// against a running cluster, side by side with kubectl on the same objects, in one run:
//
//   - plan of an unchanged installed platform vs `kubectl diff --server-side -f`;
//   - no-op apply vs `kubectl apply --server-side -f`, with the API requests of each
//     by class (GET, LIST, PATCH, ...);
//   - full installs from empty: time to Ready, and per plane the time waited beyond
//     its slowest rollout;
//   - an upgrade 1.5.0 → 1.6.0 (--canary-soak 5s) and its rollback, run as the
//     built binary: wall time against what the procedure waits for, each
//     component's canary becoming ready, soak and rollout (from the binary's
//     events), and the requests by class (from its -v 6 log).
//
// Runs are interleaved (ours, kubectl, ours, kubectl, ...) and the figures are
// medians, so a busy machine slows both sides alike; read the ratios. kubectl's
// requests are counted from separate -v=6 runs, which are not timed.
//
//	go run ./hack/bench -kubeconfig /tmp/onto/cluster/kubeconfig
//
// `make bench` (hack/test.sh bench) runs it after the Go benchmarks. It works in
// namespaces of its own (bench-*, labelled onto.dev/bench) and deletes them at the end.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
)

// config is the command line.
type config struct {
	kubeconfig string
	kubectl    string
	example    string
	crd        string
	runs       int
	installs   int
	upgrade    bool
	// doctorOnly skips everything but doctor's measurement.
	doctorOnly bool
	// upgradeOnly skips everything but the upgrade and rollback measurement.
	upgradeOnly bool
	// watchTenants >= 0 measures only the watch, over that many tenant platforms.
	watchTenants int
	watchRepairs int
	tenantFile   string
	// helm, when set, is the Helm 4 binary to measure beside: only that comparison runs.
	helm         string
	helmRounds   int
	helmChanges  int
	helmRollback string
	// scale, when set, is the fleet sizes to measure (-scale 10,50,100): only that runs.
	scale      string
	scaleRuns  int
	scaleWatch bool
	parallel   int
	// watchBaseline, when set, is another build whose watch cold start is timed
	// beside this one's, over the same fleet (-scale, -watch-tenants).
	watchBaseline string
	watchRounds   int
	// watchPod: fleet sizes over which the watch runs as a pod on a real node.
	watchPod string
}

func main() {
	var c config
	flag.StringVar(&c.kubeconfig, "kubeconfig", cmp.Or(os.Getenv("ONTO_TEST_KUBECONFIG"), os.Getenv("KUBECONFIG")), "kubeconfig of the cluster (default $ONTO_TEST_KUBECONFIG, then $KUBECONFIG)")
	flag.StringVar(&c.kubectl, "kubectl", os.Getenv("ONTO_KUBECTL"), "kubectl binary (default $ONTO_KUBECTL, then bin/kubectl beside the kubeconfig, then PATH)")
	flag.StringVar(&c.example, "f", "examples/platform.yaml", "platform file to measure")
	flag.StringVar(&c.crd, "servicemonitor-crd", "hack/testcluster/manifests/servicemonitor-crd.yaml", "ServiceMonitor CRD to create if the cluster lacks it")
	flag.IntVar(&c.runs, "runs", 7, "measured runs of each plan/diff/apply")
	flag.IntVar(&c.installs, "installs", 3, "full installs from empty")
	flag.BoolVar(&c.upgrade, "upgrade", true, "measure doctor, an upgrade and a rollback of the example installed by the built binary (its version must have an upgrade)")
	flag.BoolVar(&c.doctorOnly, "doctor-only", false, "measure doctor alone (on the example installed by the built binary)")
	flag.BoolVar(&c.upgradeOnly, "upgrade-only", false, "measure the upgrade to 1.6.0 and the rollback alone (on the example installed by the built binary)")
	flag.IntVar(&c.watchTenants, "watch-tenants", -1, "measure only `kubectl-onto watch` over this many tenant platforms (cold start, RSS and heap, requests per idle pass, drift repair latency); 0 watches an empty namespace")
	flag.IntVar(&c.watchRepairs, "watch-repairs", 9, "drift repairs timed with -watch-tenants")
	flag.StringVar(&c.tenantFile, "tenant", "examples/tenant.yaml", "platform file of each tenant for -watch-tenants and -scale")
	flag.StringVar(&c.helm, "helm", "", "measure only the comparison with this Helm 4 binary (`make bench-helm` builds one): install, no-op, log-level change and teardown")
	flag.IntVar(&c.helmRounds, "helm-rounds", 3, "rounds of the Helm comparison (an install, a no-op, the changes and a teardown each)")
	flag.IntVar(&c.helmChanges, "helm-changes", 2, "log-level changes per round of the Helm comparison")
	flag.StringVar(&c.helmRollback, "helm-rollback", "1.6.0", "version each round upgrades to (untimed) before timing the emergency rollback to the example's version beside helm rollback --wait; empty: no rollback step")
	flag.StringVar(&c.scale, "scale", "", "measure only fleets of this many tenant platforms (-tenant), comma-separated (`make bench-scale`: 10,50,100): install, plan, no-op apply beside kubectl, the watch over them")
	flag.IntVar(&c.scaleRuns, "scale-runs", 3, "interleaved rounds of plan/diff/no-op apply/kubectl apply per fleet with -scale")
	flag.BoolVar(&c.scaleWatch, "scale-watch", true, "with -scale: measure the watch over each fleet too")
	flag.IntVar(&c.parallel, "parallel", 16, "with -scale: kubectl-onto's --parallel (100 tenants from empty: 336 s at 4, 265 s at 16, 270 s at 32; the cluster's controllers bound it)")
	flag.StringVar(&c.watchBaseline, "watch-baseline", "", "with -scale or -watch-tenants: time the watch's cold start, and its RSS and live heap once synced, of this kubectl-onto binary (another build) beside the built one's, interleaved, with --namespaces and with -A, before the watch's other figures")
	flag.IntVar(&c.watchRounds, "watch-rounds", 3, "rounds of the cold-start comparison with -watch-baseline")
	flag.StringVar(&c.watchPod, "watch-pod", "", "measure only the watch as a pod on a real node (`make bench-watch-pod`: 10,100), over fleets of this many tenant platforms, comma-separated: install to Ready, a drift repair, the working set the kubelet reports")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, c, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, out io.Writer) (err error) {
	if c.kubeconfig == "" {
		return errors.New("no cluster: pass -kubeconfig or set ONTO_TEST_KUBECONFIG")
	}
	if c.runs < 1 || c.installs < 1 {
		return errors.New("-runs and -installs must be at least 1")
	}
	kubectlPath, err := findKubectl(c)
	if err != nil {
		return err
	}
	cl, err := bench.Connect(c.kubeconfig)
	if err != nil {
		return err
	}
	if err := cl.EnsureCRD(ctx, c.crd); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "onto-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	kubectl := bench.Kubectl{Path: kubectlPath, Kubeconfig: c.kubeconfig, CacheDir: filepath.Join(tmp, "kubectl-cache")}

	// Every namespace made here goes at the end, even on failure or Ctrl-C.
	var namespaces []string
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		if derr := cl.DeleteNamespaces(ctx, namespaces, 10*time.Minute); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	install := func() (*bench.Run, string, error) {
		ns := bench.NamespaceName("bench")
		namespaces = append(namespaces, ns)
		d, err := bench.Desired(c.example, ns)
		if err != nil {
			return nil, ns, err
		}
		logf("install %d objects into namespace %s", len(d.Objects()), ns)
		r, err := bench.Apply(ctx, cl.Config, d, bench.Options())
		if err != nil {
			return nil, ns, fmt.Errorf("install into %s: %w", ns, err)
		}
		return r, ns, nil
	}
	dropNamespace := func(ns string) error {
		namespaces = namespaces[:len(namespaces)-1]
		logf("delete namespace %s and wait for it to go", ns)
		return cl.DeleteNamespace(ctx, ns, 3*time.Minute)
	}

	if c.watchTenants >= 0 {
		return measureWatch(ctx, out, cl, tmp, c.kubeconfig, c.tenantFile, c.watchTenants, c.watchRepairs, c.watchBaseline, c.watchRounds, func(ns string) { namespaces = append(namespaces, ns) })
	}
	if c.watchPod != "" {
		sizes, err := parseSizes(c.watchPod)
		if err != nil {
			return err
		}
		return measureWatchPods(ctx, out, cl, tmp, c.kubeconfig, c.tenantFile, sizes, max(1, c.parallel), func(ns string) { namespaces = append(namespaces, ns) })
	}
	if c.scale != "" {
		sizes, err := parseSizes(c.scale)
		if err != nil {
			return err
		}
		sc := scaleConfig{sizes: sizes, runs: max(1, c.scaleRuns), parallel: max(1, c.parallel), tenantFile: c.tenantFile, repairs: c.watchRepairs, watch: c.scaleWatch,
			watchBaseline: c.watchBaseline, watchRounds: max(1, c.watchRounds)}
		return measureScale(ctx, out, cl, kubectl, tmp, c.kubeconfig, sc, func(ns string) { namespaces = append(namespaces, ns) })
	}
	if c.helm != "" {
		return measureHelm(ctx, out, cl, kubectl, tmp, c.helm, c.kubeconfig, c.example, c.helmRounds, c.helmChanges, c.helmRollback, func(ns string) { namespaces = append(namespaces, ns) })
	}
	if c.doctorOnly || c.upgradeOnly {
		ns := bench.NamespaceName("bench")
		namespaces = append(namespaces, ns)
		d, err := bench.Desired(c.example, ns)
		if err != nil {
			return err
		}
		bin, err := installWithBinary(ctx, tmp, c.kubeconfig, c.example, ns)
		if err != nil {
			return err
		}
		if c.upgradeOnly {
			return measureUpgrade(ctx, out, bin, c.kubeconfig, ns, d.Platform.GetName())
		}
		return measureDoctor(ctx, out, bin, c.kubeconfig, ns, d.Platform.GetName(), c.runs)
	}
	// The first install is also the unchanged platform plan and no-op apply run against.
	first, ns, err := install()
	if err != nil {
		return err
	}
	installs := []*bench.Run{first}
	d, err := bench.Desired(c.example, ns)
	if err != nil {
		return err
	}
	manifest := filepath.Join(tmp, "objects.yaml")
	if err := bench.WriteManifest(manifest, d); err != nil {
		return err
	}
	bin, err := buildPlugin(ctx, tmp)
	if err != nil {
		return err
	}
	file, err := moveToNamespace(tmp, c.example, ns)
	if err != nil {
		return err
	}
	side, err := compare(ctx, kubectl, bin, c.kubeconfig, file, manifest, c.runs)
	if err != nil {
		return err
	}
	// One production platform at a time besides the installed one: the GPU node fits
	// two.
	if err := dropNamespace(ns); err != nil {
		return err
	}
	for len(installs) < c.installs {
		r, ns, err := install()
		if err != nil {
			return err
		}
		installs = append(installs, r)
		if err := dropNamespace(ns); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nkubectl-onto benchmarks, %s, against %s (kubectl %s)\n", time.Now().Format(time.RFC3339), cl.Config.Host, kubectlPath)
	fmt.Fprintf(out, "%d objects (production example, plus the CRD and the OntoPlatform); whole processes, start to exit, medians of %d interleaved runs; a shared machine makes single figures noisy, the side-by-side ratios less so.\n\n", len(d.Objects()), c.runs)
	side.print(out)
	if err := printInstalls(out, installs); err != nil {
		return err
	}
	if !c.upgrade {
		return nil
	}
	ns2 := bench.NamespaceName("bench")
	namespaces = append(namespaces, ns2)
	if _, err := installWithBinary(ctx, tmp, c.kubeconfig, c.example, ns2); err != nil {
		return err
	}
	if err := measureDoctor(ctx, out, bin, c.kubeconfig, ns2, d.Platform.GetName(), c.runs); err != nil {
		return err
	}
	return measureUpgrade(ctx, out, bin, c.kubeconfig, ns2, d.Platform.GetName())
}

// installWithBinary builds the binary and installs the example into ns with it, so the
// platform has the revision snapshot doctor and upgrade read.
func installWithBinary(ctx context.Context, tmp, kubeconfig, example, ns string) (string, error) {
	bin, err := buildPlugin(ctx, tmp)
	if err != nil {
		return "", err
	}
	file, err := moveToNamespace(tmp, example, ns)
	if err != nil {
		return "", err
	}
	logf("kubectl-onto apply -f %s (namespace %s)", example, ns)
	if _, err := bench.RunPlugin(ctx, bin, kubeconfig, "apply", "-f", file); err != nil {
		return "", err
	}
	return bin, nil
}

// buildPlugin builds kubectl-onto into tmp (once: later calls find it built), as the
// watch's image and the release archives build it (CGO_ENABLED=0, -trimpath, -s -w):
// the figures are of the binary users run. A default `go build` links with cgo and
// the system linker, and that binary's code mapped 19 MiB more resident pages in the
// watch at 100 tenants (RssFile 72 MiB against 53).
func buildPlugin(ctx context.Context, tmp string) (string, error) {
	bin := filepath.Join(tmp, "kubectl-onto")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	logf("build %s", bin)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/kubectl-onto")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return bin, nil
}

// moveToNamespace writes the example, its namespace replaced by ns, into tmp.
func moveToNamespace(tmp, example, ns string) (string, error) {
	data, err := os.ReadFile(example)
	if err != nil {
		return "", err
	}
	file := filepath.Join(tmp, ns+".yaml")
	return file, os.WriteFile(file, bench.MoveTo(data, "", ns), 0o644)
}

// measureDoctor runs `doctor` on the installed platform runs times, whole processes,
// and prints the median wall time and the requests by class of the last run. Exit 1
// (an error finding, such as the example's Ingress TLS Secret that no one created) is
// a result here.
func measureDoctor(ctx context.Context, out io.Writer, bin, kubeconfig, ns, name string, runs int) error {
	var walls []time.Duration
	var last *bench.CommandRun
	for range runs {
		r, err := bench.RunPluginExit(ctx, bin, kubeconfig, 1, "doctor", name, "-n", ns)
		if err != nil {
			return err
		}
		walls = append(walls, r.Wall)
		last = r
	}
	fmt.Fprintf(out, "\ndoctor (production, the built binary, whole process, %d runs): median %s (%s); %s\n",
		runs, secs(bench.Median(walls)), durations(walls), last.Requests)
	return nil
}

// measureUpgrade upgrades the platform in ns to 1.6.0 with the built binary, then
// rolls it back, and prints each run's wall time against what its procedure waits
// for: per component, its canary becoming ready, the soak and the rollout (see
// bench.ComponentTiming). Their ratio is the tool's own overhead: rendering, plans,
// status writes, the final apply and prune, and the gaps between steps. The upgrade
// soaks 5 s so that the soak is part of the figure without dominating it; the
// rollback, direct by default, moves planes, not components, and has wall time only.
func measureUpgrade(ctx context.Context, out io.Writer, bin, kubeconfig, ns, name string) error {
	fmt.Fprintln(out, "\nupgrade and rollback (production, the built binary, whole process; waits: canary ready + soak + rollout, summed over components):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tcomponents\twall\tcanary ready\tsoak\trollout\twaits\twall / waits\trequests\t")
	for _, args := range [][]string{
		{"upgrade", name, "-n", ns, "--to", "1.6.0", "--canary-soak", "5s"},
		{"rollback", name, "-n", ns},
	} {
		logf("kubectl-onto %s", strings.Join(args, " "))
		r, err := bench.RunPlugin(ctx, bin, kubeconfig, args...)
		if err != nil {
			return err
		}
		var ready, soak, rollout, waits time.Duration
		comps := r.Components()
		for _, c := range comps {
			ready, soak, rollout, waits = ready+c.CanaryReady, soak+c.Soak, rollout+c.Rollout, waits+c.Waits()
		}
		ratio := "-"
		if waits > 0 {
			ratio = fmt.Sprintf("%.3f", bench.Ratio(r.Wall, waits))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.Join(args[:1], " "), len(comps), secs(r.Wall), secs(ready), secs(soak), secs(rollout), secs(waits), ratio, r.Requests)
	}
	return tw.Flush()
}

func findKubectl(c config) (string, error) {
	if c.kubectl != "" {
		return c.kubectl, nil
	}
	beside := filepath.Join(filepath.Dir(c.kubeconfig), "bin", "kubectl")
	if _, err := os.Stat(beside); err == nil {
		return beside, nil
	}
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return "", errors.New("no kubectl: pass -kubectl or set ONTO_KUBECTL (hack/testcluster/build.sh builds one)")
	}
	return p, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// comparison holds the side-by-side runs.
type comparison struct {
	plan, diff, noop, apply []time.Duration
	// planUncached is plan with ONTO_RENDER_CACHE=off.
	planUncached []time.Duration
	// Requests of one run each, counted in a run of their own (-v 6 slows a run).
	planReq, noopReq, diffReq, applyReq bench.Counts
	diffDiffers                         bool
}

// compare times, as whole processes started and waited for as a user's shell would,
// `kubectl-onto plan`, `kubectl diff --server-side`, a no-op `kubectl-onto apply` and
// `kubectl apply --server-side` in turn, runs times after one warm-up round; then it
// counts each one's requests in one -v 6 run. file is the platform in the installed
// namespace, manifest the same objects for kubectl.
func compare(ctx context.Context, kubectl bench.Kubectl, bin, kubeconfig, file, manifest string, runs int) (*comparison, error) {
	c := &comparison{}
	// --detailed-exitcode: a plan that finds changes exits 2, an error here.
	planArgs := []string{"plan", "-f", file, "--detailed-exitcode"}
	applyArgs := []string{"apply", "-f", file}
	for i := -1; i < runs; i++ {
		if i < 0 {
			logf("warm-up round (kubectl's discovery cache, first kubectl apply)")
		} else {
			logf("round %d/%d", i+1, runs)
		}
		p, err := bench.TimePlugin(ctx, bin, kubeconfig, planArgs...)
		if err != nil {
			return nil, fmt.Errorf("plan of the installed platform: %w", err)
		}
		// The same plan without the render cache: a file just edited renders.
		pc, err := bench.TimePluginEnv(ctx, []string{"ONTO_RENDER_CACHE=off"}, bin, kubeconfig, planArgs...)
		if err != nil {
			return nil, fmt.Errorf("plan of the installed platform, render cache off: %w", err)
		}
		kd, err := kubectl.Diff(ctx, manifest, false)
		if err != nil {
			return nil, err
		}
		noop, err := bench.TimePlugin(ctx, bin, kubeconfig, applyArgs...)
		if err != nil {
			return nil, err
		}
		ka, err := kubectl.Apply(ctx, manifest, false)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			continue
		}
		c.plan, c.diff, c.noop, c.apply = append(c.plan, p), append(c.diff, kd.Wall), append(c.noop, noop), append(c.apply, ka.Wall)
		c.planUncached = append(c.planUncached, pc)
		c.diffDiffers = c.diffDiffers || kd.Differs
	}
	logf("count requests (-v 6 / -v=6)")
	pr, err := bench.RunPlugin(ctx, bin, kubeconfig, planArgs...)
	if err != nil {
		return nil, err
	}
	nr, err := bench.RunPlugin(ctx, bin, kubeconfig, applyArgs...)
	if err != nil {
		return nil, err
	}
	if n := nr.Requests.Writes(); n != 0 {
		return nil, fmt.Errorf("no-op apply sent %d writes (%s)", n, nr.Requests)
	}
	kd, err := kubectl.Diff(ctx, manifest, true)
	if err != nil {
		return nil, err
	}
	ka, err := kubectl.Apply(ctx, manifest, true)
	if err != nil {
		return nil, err
	}
	c.planReq, c.noopReq, c.diffReq, c.applyReq = pr.Requests, nr.Requests, kd.Requests, ka.Requests
	c.diffDiffers = c.diffDiffers || kd.Differs
	if _, err := bench.TimePlugin(ctx, bin, kubeconfig, planArgs...); err != nil {
		return nil, fmt.Errorf("kubectl apply changed the platform: %w", err)
	}
	return c, nil
}

func (c *comparison) print(out io.Writer) {
	mp, md, mn, ma := bench.Median(c.plan), bench.Median(c.diff), bench.Median(c.noop), bench.Median(c.apply)
	fmt.Fprintf(out, "plan (production, unchanged): median %s  kubectl diff --server-side: median %s  ratio %.2f\n", secs(mp), secs(md), bench.Ratio(mp, md))
	mu := bench.Median(c.planUncached)
	fmt.Fprintf(out, "  plan, render cache off:     median %s  ratio %.2f (a file just edited)\n", secs(mu), bench.Ratio(mu, md))
	fmt.Fprintf(out, "no-op apply (production):     median %s  kubectl apply --server-side: median %s  ratio %.2f\n", secs(mn), secs(ma), bench.Ratio(mn, ma))
	if c.diffDiffers {
		fmt.Fprintln(out, "  (kubectl diff reported differences on the unchanged platform)")
	}
	fmt.Fprintln(out, "  runs, plan:        ", durations(c.plan))
	fmt.Fprintln(out, "  runs, plan, no cache:", durations(c.planUncached))
	fmt.Fprintln(out, "  runs, kubectl diff:", durations(c.diff))
	fmt.Fprintln(out, "  runs, no-op apply: ", durations(c.noop))
	fmt.Fprintln(out, "  runs, kubectl apply:", durations(c.apply))
	fmt.Fprintln(out)
	fmt.Fprintln(out, "API requests per run, by class:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\t")
	for _, v := range bench.Verbs() {
		fmt.Fprintf(tw, "%s\t", v)
	}
	fmt.Fprintln(tw, "total\t")
	row := func(name string, c bench.Counts) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, v := range bench.Verbs() {
			fmt.Fprintf(tw, "%d\t", c[v])
		}
		fmt.Fprintf(tw, "%d\t\n", c.Total())
	}
	row("plan", c.planReq)
	row("kubectl diff --server-side", c.diffReq)
	row("no-op apply (plan + apply)", c.noopReq)
	row("kubectl apply --server-side", c.applyReq)
	tw.Flush()
	fmt.Fprintln(out)
}

func printInstalls(out io.Writer, runs []*bench.Run) error {
	walls := make([]time.Duration, len(runs))
	type planeRuns struct {
		started, ready, slowest, beyond, available []time.Duration
		workloads                                  int
	}
	var order []string
	planes := map[string]*planeRuns{}
	for i, r := range runs {
		walls[i] = r.Wall
		timings, err := r.Planes()
		if err != nil {
			return err
		}
		for _, t := range timings {
			pr := planes[t.Name]
			if pr == nil {
				pr = &planeRuns{}
				planes[t.Name] = pr
				order = append(order, t.Name)
			}
			pr.started = append(pr.started, t.Started)
			pr.ready = append(pr.ready, t.Ready)
			pr.slowest = append(pr.slowest, t.SlowestRollout)
			pr.beyond = append(pr.beyond, t.Beyond())
			pr.available = append(pr.available, t.Available)
			pr.workloads = t.Workloads
		}
	}
	fmt.Fprintf(out, "full install (production, from empty to Ready, plan included): median %s over %d installs (%s)\n", secs(bench.Median(walls)), len(runs), durations(walls))
	fmt.Fprintln(out, "per plane, medians; times since the start of the run:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "plane\tworkloads\tstarted\tslowest rollout serving\tplane ready (gate)\twaited beyond slowest rollout\tall Available\t")
	for _, name := range order {
		pr := planes[name]
		slowest, beyond := "-", "-"
		if pr.workloads > 0 {
			slowest = secs(bench.Median(pr.slowest))
			beyond = fmt.Sprintf("%.1fms (max %.1fms)", ms(bench.Median(pr.beyond)), ms(maxOf(pr.beyond)))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, pr.workloads, secs(bench.Median(pr.started)), slowest, secs(bench.Median(pr.ready)), beyond, secs(bench.Median(pr.available)))
	}
	return tw.Flush()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = secs(d)
	}
	return strings.Join(parts, " ")
}
