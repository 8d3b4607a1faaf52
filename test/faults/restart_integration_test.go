//go:build faults

/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package faults holds the fault-injection tests (make faults): the built binary
// applies a platform while a control-plane component restarts, then the checks a
// platform team relies on: the run survives a short outage (or fails naming what it
// was writing), and a re-run converges with nothing lost and no lock left behind.
// They restart the cluster's API server and etcd, so they run serially, on a cluster
// of their own, never beside the main suite.
package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// plugin builds kubectl-onto once for the package.
func plugin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "onto-faults-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "kubectl-onto")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/coomia-dip/kubectl-onto/cmd/kubectl-onto").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build kubectl-onto: %v", buildErr)
	}
	return binary
}

func platformFile(t *testing.T, ns string) string {
	t.Helper()
	data, err := os.ReadFile(ontotest.ExamplePath(t, "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "platform.yaml")
	s := strings.Replace(string(data), "namespace: onto-dev", "namespace: "+ns, 1) + ontotest.SmallSpecYAML
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// run is one finished command: its exit code, its JSON events and its stderr.
type run struct {
	code   int
	events []apply.Event
	stderr string
}

// applyWithFault runs `apply -f file -o json` with the built binary and, at the first
// event at accepts, starts fault beside it, given the run's process.
func applyWithFault(t *testing.T, c *testcluster.Cluster, file string, at func(apply.Event) bool, fault func(*os.Process), args ...string) run {
	t.Helper()
	cmd := exec.Command(plugin(t), append([]string{"apply", "-f", file, "-o", "json", "--kubeconfig", c.Kubeconfig}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var r run
	var faultDone sync.WaitGroup
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	started := false
	for sc.Scan() {
		var ev apply.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		r.events = append(r.events, ev)
		if !started && at != nil && at(ev) {
			started = true
			faultDone.Add(1)
			go func() { defer faultDone.Done(); fault(cmd.Process) }()
		}
	}
	err = cmd.Wait()
	faultDone.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	r.stderr = stderr.String()
	if !started && at != nil {
		t.Fatalf("the fault's event never came; events: %+v", r.events)
	}
	return r
}

func planeReady(plane string) func(apply.Event) bool {
	return func(ev apply.Event) bool { return ev.Type == apply.EventPlaneReady && ev.Plane == plane }
}

// converges checks what every fault must leave: a re-run (of rerun's command, `apply
// -f file` when it is empty) exits 0 and writes nothing more than the interrupted run
// left to do, a plan of file then shows no change, the generated Secrets and the
// volumes are the ones from before the re-run (nothing regenerated, nothing lost), no
// lock lease and no upgrade canary is left, and the status is Ready. It returns the
// re-run.
func converges(t *testing.T, c *testcluster.Cluster, ns, file string, rerun ...string) signalled {
	t.Helper()
	ctx := t.Context()
	secrets := func() map[string]string {
		out := map[string]string{}
		list, err := c.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			for k, v := range s.Data {
				out[s.Name+"/"+k] = string(v)
			}
		}
		return out
	}
	claims := func() map[string]string { return claimUIDs(t, c, ns) }
	secretsBefore, claimsBefore := secrets(), claims()

	if len(rerun) == 0 {
		rerun = applyArgs(file)
	}
	r := applySignalled(t, c, rerun, nth(0), 0)
	if r.code != 0 {
		t.Fatalf("the re-run %v exited %d: %s", rerun, r.code, r.stderr)
	}
	out, err := exec.CommandContext(ctx, plugin(t), "plan", "-f", file, "--kubeconfig", c.Kubeconfig, "--detailed-exitcode").CombinedOutput()
	if err != nil {
		t.Fatalf("plan after the re-run: %v (exit 2 means changes)\n%s", err, out)
	}
	if after := secrets(); len(after) < len(secretsBefore) {
		t.Fatalf("generated Secret keys before the re-run %d, after %d", len(secretsBefore), len(after))
	} else {
		for k, v := range secretsBefore {
			if after[k] != v && strings.HasPrefix(k, "postgres") {
				t.Fatalf("Secret value %s changed on the re-run", k)
			}
		}
	}
	for name, uid := range claimsBefore {
		if now := claims()[name]; now != uid {
			t.Fatalf("PersistentVolumeClaim %s: UID %s before the re-run, %q after", name, uid, now)
		}
	}
	if _, err := c.Kube.CoordinationV1().Leases(ns).Get(ctx, apply.LockName("onto-dev"), metav1.GetOptions{}); err == nil {
		t.Fatal("the lock lease is left after the re-run")
	}
	deployments, err := c.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deployments.Items {
		if strings.HasSuffix(d.Name, "-canary") {
			t.Fatalf("the upgrade canary %s is left after the re-run", d.Name)
		}
	}
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Live(t, clients, ns, "onto-dev")
	if ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue || p.Status.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("status after the re-run: phase %s, Ready %+v", p.Status.Phase, ready)
	}
	recordRerun(t, r)
	return r
}

// claimUIDs is the UID of each PersistentVolumeClaim in ns, by name: a claim deleted
// and made again has another.
func claimUIDs(t *testing.T, c *testcluster.Cluster, ns string) map[string]string {
	t.Helper()
	list, err := c.Kube.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Name] = string(p.UID)
	}
	return out
}

// outage is a crash of component (SIGKILL), down for down, then its restart. Not
// SIGTERM: a terminating kube-apiserver drains its open watches (this run's) for tens
// of seconds, serving meanwhile, so the outage would not start when the test says.
func outage(t *testing.T, c *testcluster.Cluster, component string, down time.Duration) func(*os.Process) {
	return func(*os.Process) {
		start := time.Now()
		c.Restart(t, component, down, true)
		t.Logf("%s back after %s", component, time.Since(start).Round(100*time.Millisecond))
	}
}

// TestShortOutagesMidApply: the API server, then etcd, restart with 3 s down while
// the run writes the planes after infrastructure. The run survives it (writes retry
// within --retry-budget, waits re-list) and exits 0; the re-run converges.
func TestShortOutagesMidApply(t *testing.T) {
	for _, component := range []string{"kube-apiserver", "etcd"} {
		t.Run(component, func(t *testing.T) {
			scenario(t, map[string]string{"kube-apiserver": "4", "etcd": "5"}[component]+": "+component+" down 3 s mid-apply")
			c := testcluster.New(t)
			ns := c.Namespace(t)
			file := platformFile(t, ns)
			start := time.Now()
			r := applyWithFault(t, c, file, planeReady("infrastructure"), outage(t, c, component, 3*time.Second))
			if r.code != 0 {
				last := apply.Event{}
				if n := len(r.events); n > 0 {
					last = r.events[n-1]
				}
				t.Fatalf("apply through a 3 s %s outage exited %d: %s\nlast event: %+v", component, r.code, r.stderr, last)
			}
			t.Logf("apply through a 3 s %s outage: exit 0 in %s", component, time.Since(start).Round(100*time.Millisecond))
			converges(t, c, ns, file)
		})
	}
}

// TestLongOutageFailsNamingTheObject: a 20 s API server outage against a 5 s retry
// budget. If the run was writing when it came, it fails naming the plane and the
// object; if it was waiting, its wait re-lists and it may finish. Either way the
// re-run converges.
func TestLongOutageFailsNamingTheObject(t *testing.T) {
	scenario(t, "4: kube-apiserver down 20 s, retry budget 5 s")
	c := testcluster.New(t)
	ns := c.Namespace(t)
	file := platformFile(t, ns)
	r := applyWithFault(t, c, file, planeReady("infrastructure"), outage(t, c, "kube-apiserver", 20*time.Second), "--retry-budget", "5s")
	failure := r.stderr
	if n := len(r.events); n > 0 && r.events[n-1].Type == apply.EventFailed {
		failure = r.events[n-1].Message // -o json: the error is the last event
	}
	switch {
	case r.code == 0:
		t.Logf("the run was waiting through the outage and finished")
	case strings.Contains(failure, "plane ") && strings.Contains(failure, "retry budget"):
		t.Logf("the run failed as it should: %s", failure)
	default:
		t.Fatalf("apply through a 20 s outage exited %d without naming the plane, the object and the retry budget: %s\nstderr: %s", r.code, failure, r.stderr)
	}
	converges(t, c, ns, file)
}
