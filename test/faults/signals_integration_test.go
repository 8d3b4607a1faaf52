//go:build faults

/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// signalled is a run of `apply -o json` that was sent a signal at one of its events;
// sentAt is when, zero when the run ended before that event.
type signalled struct {
	run
	startedAt, sentAt, exitedAt time.Time
}

// applySignalled runs the built binary with args (a command and its flags) and `-o
// json` against c, and sends sig to it at the first event at accepts, as soon as the
// event is printed: the signal lands at that event boundary, before the run goes on to
// the next step's requests. sig 0 sends nothing (at only observes). A run killed by a
// signal exits 128+signal, as a shell reports it.
func applySignalled(t *testing.T, c *testcluster.Cluster, args []string, at func(apply.Event) bool, sig syscall.Signal) signalled {
	t.Helper()
	cmd := exec.Command(plugin(t), append(slices.Clone(args), "-o", "json", "--kubeconfig", c.Kubeconfig)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var s signalled
	s.startedAt = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fired := false
	for sc.Scan() {
		var ev apply.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		s.events = append(s.events, ev)
		if !fired && at(ev) {
			fired = true
			if sig != 0 {
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				s.sentAt = time.Now()
			}
		}
	}
	err = cmd.Wait()
	s.exitedAt = time.Now()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		s.code = exit.ExitCode()
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			s.code = 128 + int(status.Signal())
		}
	case err != nil:
		t.Fatal(err)
	}
	s.stderr = stderr.String()
	return s
}

// applyArgs is `apply -f file`.
func applyArgs(file string) []string { return []string{"apply", "-f", file} }

// nth accepts the nth event (from 1); never for 0.
func nth(n int) func(apply.Event) bool {
	seen := 0
	return func(apply.Event) bool { seen++; return seen == n }
}

// killPoint prepares namespace ns for one kill point of a run: what must be there
// before the run (an installed platform, a changed file), and returns the run's
// arguments, then the file whose spec the platform must match once the re-run is done.
type killPoint func(t *testing.T, c *testcluster.Cluster, ns string) (args []string, file string)

// rerunCheck re-runs the killed command (args) in namespace ns and checks what the
// re-run must leave; file is the platform's, as killPoint returned it.
type rerunCheck func(t *testing.T, c *testcluster.Cluster, ns, file string, args []string)

// rerunConverges is converges as a rerunCheck: the re-run of an apply or upgrade.
func rerunConverges(t *testing.T, c *testcluster.Cluster, ns, file string, args []string) {
	converges(t, c, ns, file, args...)
}

// killAtEveryEvent, the systematic test, kills the run prepare sets up with
// SIGKILL at each of its event boundaries in turn, the Nth event for every N, each on
// a namespace of its own, and checks the same things after each: the immediate re-run
// of the same command takes the dead run's lease over and converges, as check says
// (for an apply or upgrade, rerunConverges: exit 0, plan empty, Secrets and volumes
// kept, no lease or canary left, Ready).
//
// The kill points run in parallel (go test -parallel, hack/test.sh faults: 4): an
// upgrade has about 250 of them, a minute each. ONTO_FAULTS_KILL_POINTS=N-M runs only
// points N to M (N- from N on; several ranges comma-separated), to spread them over
// several runs.
func killAtEveryEvent(t *testing.T, prepare killPoint, check rerunCheck) {
	c := testcluster.New(t)
	// The event count of an undisturbed run bounds the kill points.
	args, _ := prepare(t, c, c.Namespace(t))
	full := applySignalled(t, c, args, nth(0), 0)
	if full.code != 0 {
		t.Fatalf("undisturbed run %v exited %d: %s", args, full.code, full.stderr)
	}
	points := len(full.events) - 1 // the last event is the end of the run
	run := killPointsToRun(t, points)
	t.Logf("%v: %d events undisturbed, %d kill points, running %d of them", args, len(full.events), points, len(run))
	var converged atomic.Int32
	t.Cleanup(func() {
		t.Logf("%d of %d kill points run (ONTO_FAULTS_KILL_POINTS=%q): %d converged", len(run), points, os.Getenv("ONTO_FAULTS_KILL_POINTS"), converged.Load())
	})
	for _, n := range run {
		t.Run(fmt.Sprintf("%03d-%s", n, full.events[n-1].Type), func(t *testing.T) {
			t.Parallel()
			ns := c.Namespace(t)
			args, file := prepare(t, c, ns)
			start := time.Now()
			k := applySignalled(t, c, args, nth(n), syscall.SIGKILL)
			if k.sentAt.IsZero() {
				t.Fatalf("the run ended after %d events, before event %d", len(k.events), n)
			}
			check(t, c, ns, file, args)
			converged.Add(1)
			t.Logf("killed after event %d (%s %s %s), converged in %s", n, k.events[n-1].Type, k.events[n-1].Plane, k.events[n-1].Object, time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// killPointsToRun is the kill points to run, 1 to points unless
// ONTO_FAULTS_KILL_POINTS says otherwise: ranges N-M (N- for N to the last),
// comma-separated, as 23-81,193-.
func killPointsToRun(t *testing.T, points int) []int {
	spec := os.Getenv("ONTO_FAULTS_KILL_POINTS")
	if spec == "" {
		spec = "1-"
	}
	var out []int
	for _, r := range strings.Split(spec, ",") {
		lo, hi, ok := strings.Cut(r, "-")
		from, err := strconv.Atoi(lo)
		if !ok || err != nil || from < 1 {
			t.Fatalf("ONTO_FAULTS_KILL_POINTS=%q: want ranges N-M or N-, comma-separated", spec)
		}
		to := points
		if hi != "" {
			if to, err = strconv.Atoi(hi); err != nil || to < from {
				t.Fatalf("ONTO_FAULTS_KILL_POINTS=%q: want N-M with M >= N", spec)
			}
		}
		for n := from; n <= min(to, points); n++ {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestKillAtEveryEventOfAnInstall: the run is an install from nothing.
func TestKillAtEveryEventOfAnInstall(t *testing.T) {
	scenario(t, "SIGKILL at every event of an install (1: the dead lease taken over)")
	killAtEveryEvent(t, func(t *testing.T, c *testcluster.Cluster, ns string) ([]string, string) {
		file := platformFile(t, ns)
		return applyArgs(file), file
	}, rerunConverges)
}

// TestKillAtEveryEventOfAConfigChange: the run is the apply of a log level change,
// which rolls every plane's workloads, to an installed platform.
func TestKillAtEveryEventOfAConfigChange(t *testing.T) {
	scenario(t, "SIGKILL at every event of a config change")
	killAtEveryEvent(t, func(t *testing.T, c *testcluster.Cluster, ns string) ([]string, string) {
		file := platformFile(t, ns)
		if r := applySignalled(t, c, applyArgs(file), nth(0), 0); r.code != 0 {
			t.Fatalf("install exited %d: %s", r.code, r.stderr)
		}
		appendSpec(t, file, "  observability:\n    logging:\n      level: DEBUG\n")
		return applyArgs(file), file
	}, rerunConverges)
}

// TestKillAtEveryEventOfAnUpgrade: the run is `upgrade -f` from 1.5.0 to 1.6.0 of an
// installed platform, with canaries soaked 1 s; the re-run resumes it.
func TestKillAtEveryEventOfAnUpgrade(t *testing.T) {
	scenario(t, "SIGKILL at every event of an upgrade")
	killAtEveryEvent(t, func(t *testing.T, c *testcluster.Cluster, ns string) ([]string, string) {
		file := platformFile(t, ns)
		setVersion(t, file, "1.5.0")
		if r := applySignalled(t, c, applyArgs(file), nth(0), 0); r.code != 0 {
			t.Fatalf("install of 1.5.0 exited %d: %s", r.code, r.stderr)
		}
		setVersion(t, file, "1.6.0")
		return []string{"upgrade", "-f", file, "--canary-soak", "1s"}, file
	}, rerunConverges)
}

// TestKillAtEveryEventOfAnUninstall: the run is `uninstall` of an installed platform;
// the re-run finishes it (uninstalled).
func TestKillAtEveryEventOfAnUninstall(t *testing.T) {
	scenario(t, "SIGKILL at every event of an uninstall")
	killAtEveryEvent(t, func(t *testing.T, c *testcluster.Cluster, ns string) ([]string, string) {
		file := platformFile(t, ns)
		if r := applySignalled(t, c, applyArgs(file), nth(0), 0); r.code != 0 {
			t.Fatalf("install exited %d: %s", r.code, r.stderr)
		}
		return []string{"uninstall", "onto-dev", "-n", ns}, file
	}, uninstalled)
}

// uninstalled checks what the re-run of a killed uninstall must leave: it exits 0;
// the OntoPlatform, its workloads, Services, ConfigMaps, ServiceAccounts, pods and
// lock Lease are gone; the namespace no longer carries the inventory's label (another
// platform there would be refused); the volumes and the generated Secrets are the
// ones from before the re-run.
func uninstalled(t *testing.T, c *testcluster.Cluster, ns, _ string, args []string) {
	t.Helper()
	ctx := t.Context()
	secret := func() map[string][]byte {
		s, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "postgres", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the generated postgres Secret: %v", err)
		}
		return s.Data
	}
	claimsBefore, secretBefore := claimUIDs(t, c, ns), secret()

	r := applySignalled(t, c, args, nth(0), 0)
	if r.code != 0 {
		t.Fatalf("the re-run %v exited %d: %s", args, r.code, r.stderr)
	}
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ri, err := inventory.PlatformResource(clients.Mapper, clients.Dynamic, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Get(ctx, "onto-dev", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the OntoPlatform is left after the re-run (err %v)", err)
	}
	members := metav1.ListOptions{LabelSelector: inventory.PartOfLabel + "=" + inventory.ID(ns, "onto-dev")}
	left := map[string]int{}
	if l, err := c.Kube.AppsV1().Deployments(ns).List(ctx, members); err == nil {
		left["Deployment"] = len(l.Items)
	}
	if l, err := c.Kube.AppsV1().StatefulSets(ns).List(ctx, members); err == nil {
		left["StatefulSet"] = len(l.Items)
	}
	if l, err := c.Kube.CoreV1().Services(ns).List(ctx, members); err == nil {
		left["Service"] = len(l.Items)
	}
	if l, err := c.Kube.CoreV1().ConfigMaps(ns).List(ctx, members); err == nil {
		left["ConfigMap"] = len(l.Items)
	}
	if l, err := c.Kube.CoreV1().ServiceAccounts(ns).List(ctx, members); err == nil {
		left["ServiceAccount"] = len(l.Items)
	}
	if l, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		left["Pod"] = len(l.Items)
	}
	for kind, n := range left {
		if n != 0 {
			t.Errorf("%d %s left after the re-run", n, kind)
		}
	}
	if len(left) != 6 {
		t.Fatalf("could not list every kind: %v", left)
	}
	namespace, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := namespace.Labels[inventory.PartOfLabel]; ok {
		t.Errorf("the namespace still carries %s=%s after the re-run", inventory.PartOfLabel, v)
	}
	if _, err := c.Kube.CoordinationV1().Leases(ns).Get(ctx, apply.LockName("onto-dev"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the lock lease is left after the re-run (err %v)", err)
	}
	if after := claimUIDs(t, c, ns); !maps.Equal(after, claimsBefore) {
		t.Errorf("PersistentVolumeClaims before the re-run %v, after %v", claimsBefore, after)
	}
	if !maps.EqualFunc(secret(), secretBefore, bytes.Equal) {
		t.Error("the generated postgres Secret changed on the re-run")
	}
	recordRerun(t, r)
}

// TestKillInADataPlaneCanarySoak (scenario 2): SIGKILL while `upgrade -f` soaks the
// canary of a data-plane component. The canary is left running; the re-run resumes
// (the components moved before stay moved), starts at that component, removes the
// canary and converges.
func TestKillInADataPlaneCanarySoak(t *testing.T) {
	scenario(t, "2: SIGKILL in a data-plane canary soak")
	c := testcluster.New(t)
	ns := c.Namespace(t)
	file := platformFile(t, ns)
	setVersion(t, file, "1.5.0")
	if r := applySignalled(t, c, applyArgs(file), nth(0), 0); r.code != 0 {
		t.Fatalf("install of 1.5.0 exited %d: %s", r.code, r.stderr)
	}
	setVersion(t, file, "1.6.0")
	dataPlane := []string{v1alpha1.ComponentDataService, v1alpha1.ComponentNessie}
	killedAt := ""
	k := applySignalled(t, c, []string{"upgrade", "-f", file, "--canary-soak", "30s"}, func(ev apply.Event) bool {
		if ev.Type == apply.EventUpgradeStep && slices.Contains(dataPlane, ev.Object) && strings.Contains(ev.Message, "canary") && strings.Contains(ev.Message, "watching it for") {
			killedAt = ev.Object
			return true
		}
		return false
	}, syscall.SIGKILL)
	if k.sentAt.IsZero() {
		t.Fatalf("no canary soak of a data-plane component (%v) in the upgrade; events %+v", dataPlane, k.events)
	}
	var movedBefore []string
	for _, ev := range k.events {
		if ev.Type == apply.EventUpgradeStep && strings.HasPrefix(ev.Message, "✓ on") {
			movedBefore = append(movedBefore, ev.Object)
		}
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Get(t.Context(), killedAt+"-canary", metav1.GetOptions{}); err != nil {
		t.Fatalf("the canary of %s after the kill: %v, want it left running", killedAt, err)
	}
	r := converges(t, c, ns, file, "upgrade", "-f", file, "--canary-soak", "1s")
	var resumed bool
	var first string
	for _, ev := range r.events {
		if ev.Type != apply.EventUpgradeStep {
			continue
		}
		if ev.Object == "" && strings.HasPrefix(ev.Message, "resuming") {
			resumed = true
		}
		// The re-run first deletes the canaries it finds left (one event naming the
		// killed component whatever the resume point); the first component it moves
		// is the resume point.
		removesCanary := strings.HasPrefix(ev.Message, "canary ") && strings.HasSuffix(ev.Message, " deleted")
		if ev.Object != "" && first == "" && !removesCanary {
			first = ev.Object
		}
		if slices.Contains(movedBefore, ev.Object) {
			t.Errorf("the re-run moved %s again (%q); it was on 1.6.0 before the kill", ev.Object, ev.Message)
		}
	}
	if !resumed || first != killedAt {
		t.Errorf("the re-run: resumed %v, first component %q; want a resume at %s", resumed, first, killedAt)
	}
	t.Logf("killed in the canary soak of %s after %d components moved (%v); the re-run resumed there and converged", killedAt, len(movedBefore), movedBefore)
}

// TestInterruptDuringPlaneWait (scenario 3): SIGINT while the run waits for a plane.
// The run exits within 5 s with 130, records Progressing=False/Interrupted, and leaves
// no lease; the re-run converges.
func TestInterruptDuringPlaneWait(t *testing.T) {
	scenario(t, "3: SIGINT during a plane wait")
	c := testcluster.New(t)
	ns := c.Namespace(t)
	file := platformFile(t, ns)
	probe := applySignalled(t, c, applyArgs(file), nth(0), 0)
	if probe.code != 0 {
		t.Fatalf("install exited %d: %s", probe.code, probe.stderr)
	}
	// A config change rolls every plane; interrupt at the first wait.
	appendSpec(t, file, "  observability:\n    logging:\n      level: DEBUG\n")
	waiting := 0
	r := applySignalled(t, c, applyArgs(file), func(ev apply.Event) bool {
		if ev.Type == apply.EventWaiting {
			waiting++
		}
		return waiting == 1
	}, syscall.SIGINT)
	if r.sentAt.IsZero() {
		t.Fatalf("no Waiting event to interrupt; events %+v", r.events)
	}
	if d := r.exitedAt.Sub(r.sentAt); d > 5*time.Second {
		t.Errorf("exited %s after SIGINT, want within 5 s", d.Round(100*time.Millisecond))
	} else {
		t.Logf("exited %d, %s after SIGINT", r.code, d.Round(10*time.Millisecond))
	}
	if r.code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130", r.code)
	}
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Live(t, clients, ns, "onto-dev")
	if cond := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionProgressing); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonInterrupted {
		t.Errorf("Progressing after SIGINT = %+v, want False/Interrupted", cond)
	}
	if _, err := c.Kube.CoordinationV1().Leases(ns).Get(t.Context(), apply.LockName("onto-dev"), metav1.GetOptions{}); err == nil {
		t.Error("the lock lease is left after SIGINT")
	}
	converges(t, c, ns, file)
}

// TestSecondRunWhileTheFirstHoldsTheLock (scenario 8): a second apply while the first
// holds the lock fails within 2 s naming the holder; with --lock-wait it runs once the
// first is done, and exits 0.
func TestSecondRunWhileTheFirstHoldsTheLock(t *testing.T) {
	scenario(t, "8: two runs at once")
	c := testcluster.New(t)
	ns := c.Namespace(t)
	file := platformFile(t, ns)
	type second struct {
		took time.Duration
		out  []byte
		err  error
	}
	results := make(chan second, 2)
	startSecond := func(args ...string) {
		go func() {
			start := time.Now()
			out, err := exec.Command(plugin(t), append([]string{"apply", "-f", file, "--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
			results <- second{time.Since(start), out, err}
		}()
	}
	first := applySignalled(t, c, applyArgs(file), func(ev apply.Event) bool {
		if ev.Type == apply.EventPlaneStarted {
			startSecond()
			startSecond("--lock-wait", "5m")
			return true
		}
		return false
	}, 0)
	if first.code != 0 {
		t.Fatalf("first run exited %d: %s", first.code, first.stderr)
	}
	var refused, waited *second
	for range 2 {
		r := <-results
		if r.err != nil {
			refused = &r
		} else {
			waited = &r
		}
	}
	if refused == nil || refused.took > 2*time.Second || !strings.Contains(string(refused.out), "holds its lock") {
		t.Errorf("the second run without --lock-wait: %+v, want a refusal within 2 s naming the holder", refused)
	}
	if waited == nil {
		t.Error("the run with --lock-wait failed")
	} else {
		t.Logf("without --lock-wait: refused in %s; with --lock-wait 5m: exit 0 in %s", refused.took.Round(10*time.Millisecond), waited.took.Round(100*time.Millisecond))
	}
	converges(t, c, ns, file)
}

// setVersion sets spec.version in the platform file.
func setVersion(t *testing.T, file, version string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  version: .*$`)
	if !re.Match(data) {
		t.Fatalf("%s has no spec.version line", file)
	}
	if err := os.WriteFile(file, re.ReplaceAll(data, []byte(`  version: "`+version+`"`)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendSpec appends lines under spec: of the platform file (the last section).
func appendSpec(t *testing.T, file, lines string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(lines); err != nil {
		t.Fatal(err)
	}
}
