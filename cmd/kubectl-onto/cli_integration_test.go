/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// platformFile writes examples/minimal.yaml into a temp file, moved to namespace ns,
// with extra spec lines appended (indented under spec). It sets
// spec.global.minReadySeconds to 0, as ontotest.Example does: the test cluster's pods
// are Ready at once, and the default 10 s would only slow every rollout a test waits for.
func platformFile(t *testing.T, ns, extraSpec string) string {
	t.Helper()
	data, err := os.ReadFile(example("minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const global, noMinReady = "  global:\n", "    minReadySeconds: 0\n"
	if strings.Contains(extraSpec, global) {
		extraSpec = strings.Replace(extraSpec, global, global+noMinReady, 1)
	} else {
		extraSpec = global + noMinReady + extraSpec
	}
	s := strings.Replace(string(data), "namespace: onto-dev", "namespace: "+ns, 1)
	path := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(path, []byte(s+extraSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// smallSpecWithMinio is smallSpec with minio on, for the tests that read the
// generated Secrets of postgres and minio.
var smallSpecWithMinio = strings.Replace(smallSpec, "minio: {enabled: false}", "minio: {enabled: true}", 1)

// TestCLILifecycleNeverPrintsSecrets drives the binary's commands against the real
// cluster: apply, plan with --detailed-exitcode, status, and checks that no generated
// Secret value, plain or base64, appears in anything any of them printed.
func TestCLILifecycleNeverPrintsSecrets(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	file := platformFile(t, ns, smallSpecWithMinio)
	kc := "--kubeconfig=" + c.Kubeconfig
	var printed []string
	do := func(wantCode int, args ...string) result {
		t.Helper()
		r := runCmd(t, append(args, kc)...)
		printed = append(printed, r.stdout, r.stderr)
		if r.code != wantCode {
			t.Fatalf("kubectl onto %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
		}
		return r
	}

	do(0, "apply", "-f", file, "--plane-timeout=90s", "--timeout=5m")
	do(0, "plan", "-f", file, "--detailed-exitcode")
	r := do(0, "plan", "-f", file, "-o", "json", "--show-unchanged")
	var planJSON struct {
		Summary struct{ Unchanged int } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &planJSON); err != nil || planJSON.Summary.Unchanged == 0 {
		t.Fatalf("plan -o json: %v, summary %+v", err, planJSON.Summary)
	}
	r = do(0, "apply", "-f", file)
	if !strings.Contains(r.stderr, "no changes") {
		t.Fatalf("second apply did not report no changes: %q", r.stderr)
	}
	r = do(0, "apply", "-f", file, "-o", "json")
	// The last JSON line is the outcome, as recorded in the platform's status.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last apply.Event
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("apply -o json: last line %q: %v", lines[len(lines)-1], err)
	}
	if last.Type != apply.EventDone || last.Phase != "Running" || last.Version == "" || !strings.HasSuffix(last.ReadyComponents, "/"+strings.Split(last.ReadyComponents, "/")[0]) {
		t.Fatalf("apply -o json: last event %+v, want Done with phase Running and every component ready", last)
	}
	do(0, "status", "-n", ns)
	do(0, "status", "-n", ns, "-o", "json")
	do(0, "status", "-n", ns, "-o", "yaml")
	do(0, "apply", "-f", file, "--dry-run=server")
	doctorCLI(t, do, ns, file, kc)

	// An edit makes --detailed-exitcode say "changes" (2).
	edited := platformFile(t, ns, smallSpecWithMinio+"  gateway:\n    replicas: 2\n")
	do(2, "plan", "-f", edited, "--detailed-exitcode")

	var values []string
	for _, name := range []string{"postgres", "minio"} {
		s, err := c.Kube.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("generated secret %s: %v", name, err)
		}
		if len(s.Data) == 0 {
			t.Fatalf("generated secret %s has no values", name)
		}
		for _, v := range s.Data {
			if len(v) < 16 {
				t.Fatalf("generated secret %s has a value of %d bytes, want at least 16", name, len(v))
			}
			values = append(values, string(v), base64.StdEncoding.EncodeToString(v))
		}
	}
	all := strings.Join(printed, "\n")
	for _, v := range values {
		if strings.Contains(all, v) {
			t.Fatalf("a generated secret value appeared in the commands' output")
		}
	}
}

// doctorCLI runs doctor in each format on a healthy platform: exit 0, and a JUnit
// report whose counts match its test cases.
func doctorCLI(t *testing.T, do func(int, ...string) result, ns, file, kc string) {
	t.Helper()
	r := do(0, "doctor", "-n", ns)
	if !strings.Contains(r.stdout, "ONTO-WRK-202") || !strings.Contains(r.stdout, "✓") {
		t.Fatalf("doctor text output lacks its checks:\n%s", r.stdout)
	}
	r = do(0, "doctor", "-n", ns, "-o", "json")
	var report struct {
		Success    bool `json:"success"`
		Categories []struct {
			Name   string `json:"name"`
			Checks []struct {
				Code   string `json:"code"`
				Result string `json:"result"`
			} `json:"checks"`
		} `json:"categories"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || !report.Success || len(report.Categories) < 5 {
		t.Fatalf("doctor -o json: %v, success %t, %d categories\n%s", err, report.Success, len(report.Categories), r.stdout)
	}
	do(0, "doctor", "-n", ns, "-o", "yaml")
	r = do(0, "doctor", "-n", ns, "-o", "junit")
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &suites); err != nil {
		t.Fatalf("doctor -o junit: %v\n%s", err, r.stdout)
	}
	cases := 0
	for _, s := range suites.Suites {
		if s.Tests != len(s.Cases) {
			t.Errorf("junit suite %s: tests=%d, %d testcases", s.Name, s.Tests, len(s.Cases))
		}
		cases += len(s.Cases)
	}
	if suites.Failures != 0 || suites.Tests != cases || cases == 0 {
		t.Fatalf("junit: tests=%d failures=%d, %d testcases", suites.Tests, suites.Failures, cases)
	}
	// -A: every platform of the shared test cluster, ours among them (others' tests
	// may leave theirs broken, so the exit code is 0 or 1). One category: the shared
	// cluster holds many platforms, and the workloads' checks need no dry-run.
	all := runCmd(t, "doctor", "-A", "--category", "workloads", "-o", "json", kc)
	var list struct {
		Platforms []struct {
			Platform string `json:"platform"`
			Success  bool   `json:"success"`
		} `json:"platforms"`
	}
	if err := json.Unmarshal([]byte(all.stdout), &list); err != nil || all.code > 1 {
		t.Fatalf("doctor -A -o json: exit %d, %v\n%s%s", all.code, err, all.stdout, all.stderr)
	}
	ours := false
	for _, p := range list.Platforms {
		if strings.HasPrefix(p.Platform, ns+"/") {
			ours = p.Success
		}
	}
	if !ours {
		t.Fatalf("doctor -A does not report %s as healthy:\n%s", ns, all.stdout)
	}
	// --pre of the installed file: the preflight passes on this cluster.
	do(0, "doctor", "--pre", "-f", file)
	// --pre of a file whose storage class does not exist: exit 1, naming it.
	bad := platformFile(t, ns+"-pre", "  global:\n    storageClass: no-such-class\n")
	r = do(1, "doctor", "--pre", "-f", bad)
	if !strings.Contains(r.stdout, "ONTO-PRE-004") || !strings.Contains(r.stdout, "no-such-class") {
		t.Fatalf("doctor --pre with a missing storage class:\n%s", r.stdout)
	}
	// A check that does not exist is a usage error naming it.
	r = do(1, "doctor", "-n", ns, "--check", "WRK-999")
	if !strings.Contains(r.stderr, "WRK-999") {
		t.Fatalf("doctor --check WRK-999: %q", r.stderr)
	}
}

// TestCLISavedPlan: `plan -o json` saved to a file is what `apply --plan` runs, once;
// applied again, the plan is stale and refused with nothing written.
func TestCLISavedPlan(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	if r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), kc); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	edited := platformFile(t, ns, smallSpec+"  gateway:\n    replicas: 2\n")
	r := runCmd(t, "plan", "-f", edited, "-o", "json", kc)
	if r.code != 0 {
		t.Fatalf("plan: %s", r.stderr)
	}
	saved := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(saved, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, "apply", "-f", edited, "--plan", saved, kc); r.code != 0 {
		t.Fatalf("apply --plan: exit %d: %s", r.code, r.stderr)
	}
	d, err := c.Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("gateway after apply --plan: %v, %v; want 2 replicas", d.Spec.Replicas, err)
	}
	r = runCmd(t, "apply", "-f", edited, "--plan", saved, kc)
	if r.code != 1 || !strings.Contains(r.stderr, "stale") {
		t.Fatalf("second apply of the same saved plan: exit %d, %q; want 1 and a stale-plan error", r.code, r.stderr)
	}
}

// TestCLIUnlock: unlock shows the holder and asks; "no" keeps the lock (exit 1), "yes"
// or --yes deletes it, and apply then runs.
func TestCLIUnlock(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	file := platformFile(t, ns, smallSpec)
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	lock := &apply.Lock{Kube: c.Kube, Namespace: ns, Name: apply.LockName("onto-dev"), Holder: "kubectl-onto@build-agent-3/4242", TTL: 10 * time.Minute, Now: time.Now}
	if err := lock.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, "apply", "-f", file, kc)
	if r.code != 1 || !strings.Contains(r.stderr, "build-agent-3/4242") || !strings.Contains(r.stderr, "kubectl onto unlock onto-dev -n "+ns) {
		t.Fatalf("apply under a held lock: exit %d, %q; want 1, the holder and the unlock command", r.code, r.stderr)
	}
	r = runCmdIn(t, "n\n", "unlock", "onto-dev", "-n", ns, kc)
	if r.code != 1 || !strings.Contains(r.stderr, "build-agent-3/4242") {
		t.Fatalf("unlock answered no: exit %d, %q; want 1 naming the holder", r.code, r.stderr)
	}
	if holder, _, err := apply.LeaseOf(t.Context(), c.Kube, ns, "onto-dev"); err != nil || holder == "" {
		t.Fatalf("the lock after unlock was refused: %q, %v", holder, err)
	}
	if r := runCmdIn(t, "y\n", "unlock", "onto-dev", "-n", ns, kc); r.code != 0 || !strings.Contains(r.stdout, "unlocked") {
		t.Fatalf("unlock answered yes: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 {
		t.Fatalf("apply after unlock: exit %d: %s", r.code, r.stderr)
	}
	if r := runCmd(t, "unlock", "onto-dev", "-n", ns, "--yes", kc); r.code != 0 || !strings.Contains(r.stdout, "not locked") {
		t.Fatalf("unlock of an unlocked platform: exit %d, %q", r.code, r.stdout)
	}
}

// TestCLINamespaceFlag: a file without a namespace is applied where -n
// says; a file naming another namespace than -n is refused with nothing written.
func TestCLINamespaceFlag(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	other := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	data, err := os.ReadFile(example("minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	noNS := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(noNS, []byte(strings.Replace(string(data), "  namespace: onto-dev\n", "", 1)+smallSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, "apply", "-f", noNS, "-n", ns, kc); r.code != 0 {
		t.Fatalf("apply -n %s of a file without a namespace: exit %d: %s", ns, r.code, r.stderr)
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{}); err != nil {
		t.Fatalf("gateway in %s after apply -n: %v", ns, err)
	}
	r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), "-n", other, kc)
	if r.code != 1 || !strings.Contains(r.stderr, ns) || !strings.Contains(r.stderr, other) {
		t.Fatalf("apply of a file in %s with -n %s: exit %d, %q; want 1 naming both", ns, other, r.code, r.stderr)
	}
	if deps, err := c.Kube.AppsV1().Deployments(other).List(t.Context(), metav1.ListOptions{}); err != nil || len(deps.Items) != 0 {
		t.Fatalf("deployments in %s after a refused apply: %d, %v", other, len(deps.Items), err)
	}
}

// TestCLIDryRunFailsLikeApply: apply --dry-run=server runs the same checks as a real
// apply, so it fails where apply would (here --max-deletes), writing nothing.
func TestCLIDryRunFailsLikeApply(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	if r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec+"  gateway:\n    ingress: {enabled: true, host: onto.example.com}\n"), kc); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), "--dry-run=server", "--max-deletes=0", kc)
	if r.code != 1 || !strings.Contains(r.stderr, "--max-deletes") || !strings.Contains(r.stdout, "delete") {
		t.Fatalf("apply --dry-run=server --max-deletes=0 of a plan that deletes: exit %d\nstdout %q\nstderr %q\nwant the plan shown and exit 1", r.code, r.stdout, r.stderr)
	}
	if _, err := c.Kube.NetworkingV1().Ingresses(ns).Get(t.Context(), "gateway", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Ingress after a dry run: %v", err)
	}
}

// TestCLIStatusAgreesWithItself: after a workload is scaled down behind
// the tool's back, status reads the live workloads for its summary and says that the
// recorded Ready condition is the last run's, and that the live count disagrees.
func TestCLIStatusAgreesWithItself(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	if r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), kc); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	r := runCmd(t, "status", "-n", ns, kc)
	if r.code != 0 || strings.Contains(r.stdout, "(recorded; live") || !strings.Contains(r.stdout, "recorded by the last run") {
		t.Fatalf("status right after apply: exit %d\n%s", r.code, r.stdout)
	}
	scale := []byte(`{"spec":{"replicas":0}}`)
	if _, err := c.Kube.AppsV1().Deployments(ns).Patch(t.Context(), "gateway", types.MergePatchType, scale, metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "status", "-n", ns, "-o", "json", kc)
	var report struct {
		Ready           bool   `json:"ready"`
		ReadyComponents string `json:"readyComponents"`
		Conditions      []struct {
			Type          string `json:"type"`
			Status        string `json:"status"`
			LiveDisagrees bool   `json:"liveDisagrees"`
		} `json:"conditions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.stdout)
	}
	var readyRecorded, flagged bool
	for _, cond := range report.Conditions {
		if cond.Type == "Ready" {
			readyRecorded, flagged = cond.Status == "True", cond.LiveDisagrees
		}
	}
	if report.Ready || !readyRecorded || !flagged {
		t.Fatalf("status after the gateway was scaled to 0: live ready %v (%s), recorded Ready %v, flagged %v; want live not ready, recorded True, flagged",
			report.Ready, report.ReadyComponents, readyRecorded, flagged)
	}
	if r := runCmd(t, "status", "-n", ns, kc); !strings.Contains(r.stdout, "(recorded; live: "+report.ReadyComponents+" ready)") {
		t.Fatalf("status text does not mark the recorded Ready condition:\n%s", r.stdout)
	}
}

// TestCLIRequestLogging: -v 6 logs each API request (method, URL, status, time) on
// stderr as kubectl does, -v 8 adds headers, and no level logs a Secret value; without
// -v nothing of it is printed.
func TestCLIRequestLogging(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	file := platformFile(t, ns, smallSpecWithMinio)
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	if r := runCmd(t, "plan", "-f", file, kc); strings.Contains(r.stderr, "/api/v1/namespaces/"+ns) {
		t.Fatalf("plan without -v logged requests:\n%s", r.stderr)
	}
	r6 := runCmd(t, "plan", "-f", file, "-v", "6", kc)
	if r6.code != 0 || !strings.Contains(r6.stderr, "/api/v1/namespaces/"+ns+"/secrets") || !strings.Contains(r6.stderr, "200 OK") {
		t.Fatalf("plan -v 6: exit %d, no request line for the Secrets list with its status:\n%s", r6.code, r6.stderr)
	}
	r8 := runCmd(t, "plan", "-f", file, "-v", "8", kc)
	if r8.code != 0 || !strings.Contains(r8.stderr, "headers") {
		t.Fatalf("plan -v 8: exit %d, no headers:\n%s", r8.code, r8.stderr)
	}
	for _, name := range []string{"postgres", "minio"} {
		s, err := c.Kube.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range s.Data {
			if strings.Contains(r6.stderr+r8.stderr, string(v)) || strings.Contains(r6.stderr+r8.stderr, base64.StdEncoding.EncodeToString(v)) {
				t.Fatalf("a value of Secret %s appeared in the request log", name)
			}
		}
	}
}

// TestCLIApplyNewVersionUpgrades: apply -f of a file with a new spec.version runs the
// component-by-component upgrade (canaries), not a plane-at-once apply, and ends with
// the platform on the new version; a downgrade is refused the same way.
func TestCLIApplyNewVersionUpgrades(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	old := platformFile(t, ns, smallSpec)
	data, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte(strings.Replace(string(data), `version: "1.6.0"`, `version: "1.5.0"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, "apply", "-f", old, kc); r.code != 0 {
		t.Fatalf("apply 1.5.0: exit %d\n%s", r.code, r.stderr)
	}
	r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), "--canary-soak=1s", kc)
	if r.code != 0 || !strings.Contains(r.stderr, "upgrading component by component") || !strings.Contains(r.stderr, "gateway-canary") ||
		!strings.Contains(r.stdout, "1.5.0 → 1.6.0") {
		t.Fatalf("apply of 1.6.0 over 1.5.0: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "apply", "-f", old, kc)
	if r.code != 1 || !strings.Contains(r.stderr, "--force-version") {
		t.Fatalf("apply of 1.5.0 over 1.6.0: exit %d, want a refused downgrade naming --force-version\n%s", r.code, r.stderr)
	}
	r = runCmd(t, "upgrade", "-n", ns, "--to", "1.5.0", "--dry-run", kc)
	if r.code != 1 || !strings.Contains(r.stderr, "--force applies") || strings.Contains(r.stderr, "--force-version") {
		t.Fatalf("upgrade --to 1.5.0 --dry-run: exit %d, want a refused downgrade naming upgrade's --force\n%s", r.code, r.stderr)
	}
	r = runCmd(t, "upgrade", "-n", ns, "--to", "9.9.9", kc)
	if r.code != 1 || !strings.Contains(r.stderr, "known: 1.5.0, 1.6.0") || strings.Count(r.stderr, "1.6.0") != 1 {
		t.Fatalf("upgrade --to 9.9.9: exit %d, want the known versions listed once\n%s", r.code, r.stderr)
	}
}

// TestCLIStatusWaitRecordsARunThatDidNotWait: after apply --wait=false the
// OntoPlatform is InProgress for kstatus (the library Flux and kapp judge with) and
// Ready=False; status --wait, once every component is ready, records the run's
// outcome, so kstatus says Current and Ready=True at the spec's generation. Without
// the record it stayed InProgress for good ("generation is 1, but latest observed
// generation is 0").
func TestCLIStatusWaitRecordsARunThatDidNotWait(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	if r := runCmd(t, "apply", "-f", platformFile(t, ns, smallSpec), "--wait=false", kc); r.code != 0 {
		t.Fatalf("apply --wait=false: exit %d: %s", r.code, r.stderr)
	}
	live := func() (*unstructured.Unstructured, *kstatus.Result) {
		t.Helper()
		l, err := c.Dynamic.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms")).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("list OntoPlatforms: %v (%d)", err, len(l.Items))
		}
		res, err := kstatus.Compute(&l.Items[0])
		if err != nil {
			t.Fatal(err)
		}
		return &l.Items[0], res
	}
	if _, res := live(); res.Status != kstatus.InProgressStatus {
		t.Fatalf("kstatus right after apply --wait=false: %s (%s), want InProgress", res.Status, res.Message)
	}
	if r := runCmd(t, "status", "--wait", "--timeout", "3m", "-n", ns, kc); r.code != 0 {
		t.Fatalf("status --wait: exit %d: %s", r.code, r.stderr)
	}
	u, res := live()
	if res.Status != kstatus.CurrentStatus {
		t.Fatalf("kstatus after status --wait: %s (%s), want Current", res.Status, res.Message)
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || p.Status.ObservedGeneration != p.Generation || p.Status.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("after status --wait: Ready %+v, observedGeneration %d of %d, phase %s", ready, p.Status.ObservedGeneration, p.Generation, p.Status.Phase)
	}
	// A second status --wait has nothing to record and writes nothing.
	rv := u.GetResourceVersion()
	if r := runCmd(t, "status", "--wait", "-n", ns, kc); r.code != 0 {
		t.Fatalf("second status --wait: exit %d: %s", r.code, r.stderr)
	}
	if u2, _ := live(); u2.GetResourceVersion() != rv {
		t.Errorf("the second status --wait wrote the OntoPlatform (resourceVersion %s → %s)", rv, u2.GetResourceVersion())
	}
}
