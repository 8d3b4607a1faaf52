/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// fleetKubeconfig writes one kubeconfig with a context per cluster, named as the map
// says, each with that cluster's own server and credentials; unreachable contexts
// point at a port nothing listens on, with the first cluster's credentials.
func fleetKubeconfig(t *testing.T, clusters map[string]*testcluster.Cluster, unreachable ...string) string {
	t.Helper()
	out := clientcmdapi.NewConfig()
	var any *clientcmdapi.Config
	for name, c := range clusters {
		cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := clientcmdapi.FlattenConfig(cfg); err != nil {
			t.Fatal(err)
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		out.Clusters[name] = cfg.Clusters[ctx.Cluster]
		out.AuthInfos[name] = cfg.AuthInfos[ctx.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
		any = cfg
	}
	for _, name := range unreachable {
		ctx := any.Contexts[any.CurrentContext]
		cl := any.Clusters[ctx.Cluster].DeepCopy()
		cl.Server = "https://127.0.0.1:1" // port 1: nothing listens, the dial is refused at once
		out.Clusters[name] = cl
		out.AuthInfos[name] = any.AuthInfos[ctx.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// fleetRun is the JSON summary an apply or upgrade --fleet -o json ends with.
func fleetRun(t *testing.T, r result) printers.ClusterFleetView {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var v printers.ClusterFleetView
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("last line of stdout is not the fleet summary: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return v
}

// results are the clusters' results, "name=result" in the view's order.
func results(v printers.ClusterFleetView) string {
	var out []string
	for _, c := range v.Clusters {
		out = append(out, c.Cluster+"="+c.Result)
	}
	return strings.Join(out, " ")
}

// TestCLIFleetOfClusters: one fleet of three real control planes in two waves, dev
// (canary) then staging and prod. The first apply installs all three; an upgrade
// whose canary fails on dev (its new ontology-service image never becomes ready
// there) stops before the second wave and leaves it untouched; once the image is
// fixed, the same command resumes and finishes; a re-run finds every cluster up to
// date; and a cluster that cannot be reached fails its wave within --timeout while the
// waves after it are not started.
func TestCLIFleetOfClusters(t *testing.T) {
	t.Parallel()
	dev := testcluster.New(t)
	extra := testcluster.StartExtra(t, 2)
	staging, prod := extra[0], extra[1]
	ns := dev.NewNamespaceName(t) // the extra clusters go with the test
	kubeconfig := fleetKubeconfig(t, map[string]*testcluster.Cluster{"dev": dev, "staging": staging, "prod": prod}, "unreachable")
	kc := "--kubeconfig=" + kubeconfig

	dir := t.TempDir()
	platformAt := func(version string) {
		data, err := os.ReadFile(platformFile(t, ns, smallSpec))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(data), `version: "1.6.0"`, `version: "`+version+`"`, 1)
		if err := os.WriteFile(filepath.Join(dir, "platform.yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	platformAt("1.5.0")
	writeFleet := func(name, waves string) string {
		path := filepath.Join(dir, name)
		doc := "apiVersion: onto.paas/v1alpha1\nkind: Fleet\nplatforms: [platform.yaml]\nwaves:\n" + waves
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// staging's patch (two gateway replicas) is its own, stored in its spec.patches.
	const stagingPatch = `
    patches:
    - target: {kind: Deployment, name: gateway}
      patch: '[{"op": "replace", "path": "/spec/replicas", "value": 2}]'
`
	fleet := writeFleet("fleet.yaml", `- name: canary
  clusters: [{context: dev}]
- name: production
  maxParallel: 2
  clusters:
  - context: staging`+stagingPatch+`  - context: prod
`)
	clusters := map[string]*testcluster.Cluster{"dev": dev, "staging": staging, "prod": prod}
	platformOn := func(name string) *v1alpha1.OntoPlatform {
		t.Helper()
		var p v1alpha1.OntoPlatform
		raw, err := clusters[name].Dynamic.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms")).Namespace(ns).Get(t.Context(), "onto-dev", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := raw.MarshalJSON()
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}

	// Before the install: the dry run and the plan go through every wave and write
	// nothing.
	r := runCmd(t, "apply", "--fleet", fleet, "--dry-run=server", kc)
	if r.code != 0 || !strings.Contains(r.stdout, "CLUSTER  WAVE        CHANGES  CONFLICTS") || strings.Count(r.stdout, "cluster ") != 3 {
		t.Fatalf("apply --fleet --dry-run=server: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r = runCmd(t, "plan", "--fleet", fleet, "--detailed-exitcode", kc); r.code != 2 {
		t.Fatalf("plan --fleet --detailed-exitcode before the install: exit %d, want 2\n%s", r.code, r.stderr)
	}
	for name := range clusters {
		if p := platformOn(name); p != nil {
			t.Fatalf("the dry run created the platform on %s", name)
		}
	}

	// The first install.
	start := time.Now()
	r = runCmd(t, "apply", "--fleet", fleet, "-o", "json", kc)
	wall := time.Since(start)
	v := fleetRun(t, r)
	if r.code != 0 || results(v) != "dev=succeeded staging=succeeded prod=succeeded" {
		t.Fatalf("apply --fleet: exit %d, %s\nstderr:\n%s", r.code, results(v), r.stderr)
	}
	logFigures(t, "apply --fleet (install)", wall, v)
	for name := range clusters {
		if p := platformOn(name); p == nil || p.Status.Version != "1.5.0" || p.Status.Phase != v1alpha1.PhaseRunning {
			t.Fatalf("%s after apply --fleet: %+v", name, p)
		}
	}
	for name, want := range map[string]int32{"dev": 1, "staging": 2, "prod": 1} {
		d, err := clusters[name].Kube.AppsV1().Deployments(ns).Get(t.Context(), "gateway", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != want {
			t.Errorf("%s: gateway has %d replicas, want %d (the patch is staging's only)", name, *d.Spec.Replicas, want)
		}
	}
	if !strings.Contains(r.stdout, `{"cluster":"staging","platform":"`+ns+`/onto-dev"`) || !strings.Contains(r.stderr, "apply wave 2/2 production: staging, prod") ||
		!strings.Contains(r.stderr, "apply wave 1/2 canary passed") || !strings.Contains(r.stderr, "prod "+ns+"/onto-dev doctor: no error") {
		t.Errorf("progress does not name the cluster:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	// status --fleet: one row per cluster, the same facts.
	r = runCmd(t, "status", "--fleet", fleet, "-o", "json", kc)
	var sv printers.ClusterStatusView
	if err := json.Unmarshal([]byte(r.stdout), &sv); r.code != 0 || err != nil || len(sv.Clusters) != 3 {
		t.Fatalf("status --fleet: exit %d, %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	for _, c := range sv.Clusters {
		if len(c.Platforms) != 1 || c.Platforms[0].Version != "1.5.0" || !c.Platforms[0].Ready {
			t.Errorf("status --fleet row %s: %+v", c.Cluster, c)
		}
	}

	// Nothing changed since: plan --fleet --detailed-exitcode exits 0.
	if r = runCmd(t, "plan", "--fleet", fleet, "--detailed-exitcode", kc); r.code != 0 || !strings.Contains(r.stdout, "CLUSTER  WAVE") {
		t.Fatalf("plan --fleet after the install: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The upgrade's preview goes through every wave and moves nothing.
	if r = runCmd(t, "upgrade", "--fleet", fleet, "--to", "1.6.0", "--dry-run", kc); r.code != 0 || strings.Count(r.stderr, "1.5.0 → 1.6.0") != 3 {
		t.Fatalf("upgrade --fleet --dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// The upgrade's canary fails on dev: the production wave is not touched.
	fix := dev.ChaosImageUntil(t, ns, "ghcr.io/coomia-dip/ontology-service:1.6.0", testcluster.ChaosNeverReady)
	// 10 s for the canary that never becomes ready; the runs after the fix keep the
	// default, so a busy machine does not fail a canary that is merely slow. A 1 s
	// soak: with 0 each canary is still watched for a 10 s crash-loop window.
	upgradeArgs := []string{"upgrade", "--fleet", fleet, "--to", "1.6.0", "--canary-soak", "1s", "-o", "json", kc}
	r = runCmd(t, append(upgradeArgs, "--canary-timeout", "10s")...)
	v = fleetRun(t, r)
	if r.code != 1 || results(v) != "dev=failed staging=not-started prod=not-started" || v.StoppedAt != "canary" {
		t.Fatalf("upgrade --fleet with a failing canary: exit %d, %s, stopped at %q\nstderr:\n%s", r.code, results(v), v.StoppedAt, r.stderr)
	}
	if !strings.Contains(v.Clusters[0].Error, "ontology-service") || !strings.Contains(r.stderr, "1 of 3 clusters failed: dev") ||
		!strings.Contains(r.stderr, "upgrade wave 1/2 canary failed (dev): the fleet stops") {
		t.Errorf("the failure does not name the cluster and component: %q\n%s", v.Clusters[0].Error, r.stderr)
	}
	for _, name := range []string{"staging", "prod"} {
		p := platformOn(name)
		if p.Status.Version != "1.5.0" || p.Status.Upgrade != nil || p.Generation != 1 {
			t.Errorf("%s was touched by the stopped upgrade: version %s, generation %d, upgrade %+v", name, p.Status.Version, p.Generation, p.Status.Upgrade)
		}
	}

	// The image is fixed: the same command resumes dev's upgrade, then the next wave.
	fix()
	start = time.Now()
	r = runCmd(t, upgradeArgs...)
	wall = time.Since(start)
	v = fleetRun(t, r)
	if r.code != 0 || results(v) != "dev=succeeded staging=succeeded prod=succeeded" {
		t.Fatalf("upgrade --fleet after the fix: exit %d, %s\nstderr:\n%s", r.code, results(v), r.stderr)
	}
	logFigures(t, "upgrade --fleet (resumed)", wall, v)
	for name := range clusters {
		if p := platformOn(name); p.Status.Version != "1.6.0" || p.Status.Upgrade != nil {
			t.Errorf("%s after the resumed upgrade: version %s, upgrade %+v", name, p.Status.Version, p.Status.Upgrade)
		}
	}
	if r = runCmd(t, upgradeArgs...); r.code != 0 || results(fleetRun(t, r)) != "dev=up-to-date staging=up-to-date prod=up-to-date" {
		t.Fatalf("upgrade --fleet once more: exit %d, %s\n%s", r.code, results(fleetRun(t, r)), r.stderr)
	}

	// A cluster that cannot be reached fails its wave, within --timeout; the wave
	// after it is not started.
	platformAt("1.6.0")
	withDead := writeFleet("dead.yaml", `- name: canary
  clusters: [{context: dev}]
- name: staging
  clusters:
  - context: staging`+stagingPatch+`  - context: unreachable
- name: production
  clusters: [{context: prod}]
`)
	start = time.Now()
	r = runCmd(t, "apply", "--fleet", withDead, "--timeout", "60s", "-o", "json", kc)
	took := time.Since(start)
	v = fleetRun(t, r)
	if r.code != 1 || results(v) != "dev=up-to-date staging=up-to-date unreachable=failed prod=not-started" || took > 60*time.Second {
		t.Fatalf("apply --fleet with an unreachable cluster: exit %d after %s, %s\nstderr:\n%s", r.code, took, results(v), r.stderr)
	}
	if !strings.Contains(v.Clusters[2].Error, "cannot reach") || !strings.Contains(v.Clusters[2].Error, `"unreachable"`) {
		t.Errorf("the unreachable cluster's error: %q", v.Clusters[2].Error)
	}
}

// logFigures logs the fleet run's wall time against the slowest cluster's own run, per
// wave, and the requests each cluster got: the overhead of the fleet layer.
func logFigures(t *testing.T, what string, wall time.Duration, v printers.ClusterFleetView) {
	t.Helper()
	slowest := map[string]float64{}
	var waves []string
	var parts []string
	for _, c := range v.Clusters {
		if _, ok := slowest[c.Wave]; !ok {
			waves = append(waves, c.Wave)
		}
		slowest[c.Wave] = max(slowest[c.Wave], c.DurationSeconds)
		parts = append(parts, fmt.Sprintf("%s %.2fs %d requests", c.Cluster, c.DurationSeconds, c.Requests))
	}
	sum := 0.0
	for _, w := range waves {
		sum += slowest[w]
	}
	t.Logf("%s: wall %s; sum over waves of the slowest cluster's run %.2fs (overhead %.2fs); %s",
		what, wall.Round(time.Millisecond), sum, wall.Seconds()-sum, strings.Join(parts, ", "))
}
