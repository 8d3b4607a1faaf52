/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade_test

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// badRelease writes a release catalog entry of 1.6.0 into a directory of the test,
// as `--releases DIR` would read it: the shipped entry with data-service pinned to
// an image of its own, which kwok fails as mode says (ChaosImage). It returns the
// catalog's entry.
func (e *upEnv) badRelease(mode testcluster.ChaosMode) release.Release {
	e.t.Helper()
	image := "registry.example.com/chaos/data-service:" + testcluster.UniqueName(e.t, string(mode))
	e.c.ChaosImage(e.t, e.p.Namespace, image, mode)

	data, err := fs.ReadFile(manifests.FS, path.Join(manifests.ReleasesDir, "1.6.0.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	rel, err := release.Parse(data)
	if err != nil {
		e.t.Fatal(err)
	}
	shipped := rel.Components["data-service"]
	rel.Components["data-service"] = release.ComponentImage{Image: image, Uses: shipped.Uses}
	if data, err = yaml.Marshal(rel); err != nil {
		e.t.Fatal(err)
	}
	dir := e.t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "1.6.0.yaml"), data, 0o644); err != nil {
		e.t.Fatal(err)
	}
	catalog, err := release.Load(manifests.FS, manifests.ReleasesDir, dir)
	if err != nil {
		e.t.Fatalf("load the catalog with %s: %v", dir, err)
	}
	entry, err := catalog.Get("1.6.0")
	if err != nil {
		e.t.Fatal(err)
	}
	if got, _ := entry.Image("data-service", "", ""); got != image {
		e.t.Fatalf("the catalog's 1.6.0 entry has data-service %s, want %s from %s", got, image, dir)
	}
	return entry
}

// upgradeTo runs the upgrade to 1.6.0 with release entry rel and the given canary
// timeout and soak.
func (e *upEnv) upgradeTo(rel release.Release, canaryTimeout, soak time.Duration) (*upgrade.Result, error) {
	e.t.Helper()
	opts := upgrade.DefaultOptions()
	opts.Apply = ontotest.ApplyOptions()
	opts.CanaryTimeout, opts.CanarySoak = canaryTimeout, soak
	spec := *e.p.Spec.DeepCopy()
	spec.Version = "1.6.0"
	u := &upgrade.Upgrade{
		Clients: e.clients, Catalog: ontotest.Catalog(e.t), Namespace: e.p.Namespace, Name: e.p.Name, Options: opts,
		Target: &upgrade.Target{Spec: spec, Release: rel},
		Applier: &apply.Applier{Clients: e.clients, Now: time.Now, Observer: func(ev apply.Event) {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		}},
	}
	return u.Run(e.t.Context())
}

// assertReturned checks the state a data-service failure leaves: the error names it,
// the control plane before it is on 1.6.0, data-service is back on 1.5.0 and
// available, the components after it are untouched and no canary is left.
func (e *upEnv) assertReturned(err error) {
	e.t.Helper()
	var ce *upgrade.ComponentError
	if !errors.As(err, &ce) || ce.Component != "data-service" || !ce.RolledBack || !strings.Contains(err.Error(), "data-service") {
		e.t.Fatalf("upgrade with a bad data-service: %v, want a ComponentError naming data-service, rolled back", err)
	}
	vs, canaries := e.versions()
	want := map[string]string{"postgres": "1.6.0", "ontology-service": "1.6.0", "data-service": "1.5.0", "nessie": "1.5.0", "gateway": "1.5.0"}
	for name, v := range want {
		if vs[name] != v {
			e.t.Errorf("%s runs %s, want %s", name, vs[name], v)
		}
	}
	if canaries != 0 {
		e.t.Errorf("%d canaries left after the failure", canaries)
	}
	dep, err := e.clients.Kube.AppsV1().Deployments(e.p.Namespace).Get(e.t.Context(), "data-service", metav1.GetOptions{})
	if err != nil || dep.Status.AvailableReplicas != *dep.Spec.Replicas || dep.Status.UpdatedReplicas != *dep.Spec.Replicas {
		e.t.Fatalf("data-service after its failure: %v, available %d, updated %d", err, dep.Status.AvailableReplicas, dep.Status.UpdatedReplicas)
	}
	if u := e.platform().Status.Upgrade; u == nil || u.FailedComponent != "data-service" {
		e.t.Fatalf("status.upgrade after the failure: %+v", u)
	}
}

// TestUpgradeBadRelease: a release entry whose data-service never becomes ready, or
// crash-loops, fails data-service's canary; it returns to 1.5.0 and stays available,
// the control plane stays on 1.6.0 and the components after it are untouched.
func TestUpgradeBadRelease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		mode          testcluster.ChaosMode
		canaryTimeout time.Duration
		soak          time.Duration
		// want is in the error: where the canary was caught.
		want string
		// within bounds the run: a never-ready canary fails at its timeout, not at the
		// plane timeout (90 s).
		within time.Duration
	}{
		// Never Ready: the canary's wait gives up at the canary timeout.
		{mode: testcluster.ChaosNeverReady, canaryTimeout: 20 * time.Second, soak: 2 * time.Second, want: "not ready after 20s", within: 90 * time.Second},
		// Ready, then crashes 3 s after it runs: the soak sees the restart.
		{mode: testcluster.ChaosCrashLoop, canaryTimeout: 30 * time.Second, soak: 5 * time.Second, want: "data-service-canary", within: 90 * time.Second},
		// The same with --canary-soak 0 and minReadySeconds 0: the crash-loop window
		// after the canary is ready still sees it.
		{name: "crashloop-no-soak", mode: testcluster.ChaosCrashLoop, canaryTimeout: 30 * time.Second, soak: 0, want: "data-service-canary", within: 90 * time.Second},
	}
	for _, tc := range tests {
		name := tc.name
		if name == "" {
			name = string(tc.mode)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := installAt(t, "1.5.0", ontotest.Small)
			rel := e.badRelease(tc.mode)
			start := time.Now()
			_, err := e.upgradeTo(rel, tc.canaryTimeout, tc.soak)
			took := time.Since(start)
			t.Logf("the upgrade failed after %s: %v", took.Round(time.Millisecond), err)
			e.assertReturned(err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if took > tc.within {
				t.Errorf("the failure took %s, want under %s", took, tc.within)
			}
		})
	}
}

// TestUpgradeOOMKilledCaughtBySoak: a data-service that is Ready and then OOM-killed
// once, about 1 s later, and Ready again, passes every readiness wait; only a watch
// after it is ready catches it. With a 3 s soak its canary fails and it returns to
// 1.5.0. With --canary-soak 0 (and the test platform's minReadySeconds 0) the canary
// is still watched for one crash-loop window, and the resumed run fails the same way
// instead of moving data-service and the components after it.
func TestUpgradeOOMKilledCaughtBySoak(t *testing.T) {
	t.Parallel()
	e := installAt(t, "1.5.0", ontotest.Small)
	rel := e.badRelease(testcluster.ChaosOOMKilled)

	_, err := e.upgradeTo(rel, 30*time.Second, 3*time.Second)
	e.assertReturned(err)
	if !strings.Contains(err.Error(), "OOMKilled") {
		t.Errorf("the soak's error does not say OOMKilled: %v", err)
	}

	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	_, err = e.upgradeTo(rel, 30*time.Second, 0)
	e.assertReturned(err)
	if !strings.Contains(err.Error(), "OOMKilled") {
		t.Errorf("with --canary-soak 0 the error does not say OOMKilled: %v", err)
	}
	var window bool
	e.mu.Lock()
	for _, ev := range e.events {
		window = window || (ev.Type == apply.EventUpgradeStep && ev.Object == "data-service" && strings.Contains(ev.Message, "crash-loop window"))
	}
	e.mu.Unlock()
	if !window {
		t.Error("no event says data-service's canary was watched for a crash-loop window with --canary-soak 0")
	}
}
