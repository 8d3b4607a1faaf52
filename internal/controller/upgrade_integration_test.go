/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// TestWatchUpgradesStepByStep: one watch over two platforms with a single worker
// (--max-concurrent-reconciles 1). Platform a's spec.version moves 1.5.0 → 1.6.0 and
// the watch upgrades it one component per pass (status.upgrade.driver watch); a
// Deployment of platform b deleted meanwhile is back before a's upgrade ends, since
// the worker is free between two of a's components. a then ends on 1.6.0 with every
// component moved.
func TestWatchUpgradesStepByStep(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	install := func(version string) *v1alpha1.OntoPlatform {
		p := ontotest.Example(t, "minimal.yaml", c.Namespace(t))
		p.Spec.Version = version
		ontotest.Small(&p.Spec)
		ontotest.Install(t, clients, p)
		return p
	}
	a, b := install("1.5.0"), install("1.6.0")
	mgr, err := controller.NewManager(c.Config, clients, controller.Options{
		Namespaces: []string{a.Namespace, b.Namespace}, Drift: controller.DriftRepair, Audit: controller.NewAuditLog(&syncBuffer{}),
		Holder: "watch-step-test", LockTTL: 15 * time.Second, Catalog: ontotest.Catalog(t), MaxConcurrentReconciles: 1,
		Log:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Upgrade: &controller.UpgradeSettings{CanarySoak: 3 * time.Second, CanaryTimeout: 90 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	ea := &watchEnv{t: t, c: c, clients: clients, p: a}
	eb := &watchEnv{t: t, c: c, clients: clients, p: b}
	for _, e := range []*watchEnv{ea, eb} {
		e.eventually("finalizer on "+e.p.Namespace, 60*time.Second, func() (bool, error) {
			return contains(e.live().Finalizers, apply.Finalizer), nil
		})
	}

	ri, err := clients.Resource(platformObject(a))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Patch(ctx, a.Name, types.MergePatchType, []byte(`{"spec":{"version":"1.6.0"}}`), metav1.PatchOptions{FieldManager: "gitops"}); err != nil {
		t.Fatal(err)
	}
	// The watch's upgrade under way, past its first component.
	ea.eventually("a's upgrade moving, driven by the watch", 90*time.Second, func() (bool, error) {
		u := ea.live().Status.Upgrade
		return u != nil && u.Driver == v1alpha1.UpgradeDriverWatch && len(u.Done) >= 1, nil
	})
	old, err := eb.deployment("gateway")
	if err != nil {
		t.Fatal(err)
	}
	if err := clients.Kube.AppsV1().Deployments(b.Namespace).Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	eb.eventually("b's gateway recreated", 90*time.Second, func() (bool, error) {
		d, err := eb.deployment("gateway")
		return err == nil && d.UID != old.UID, client404(err)
	})
	repaired := time.Since(deleted)
	u := ea.live().Status.Upgrade
	if u == nil {
		t.Fatalf("a's upgrade ended before b's Deployment was repaired (%s after its deletion): the worker was held by the whole upgrade", repaired.Round(time.Millisecond))
	}
	t.Logf("b's gateway back %s after its deletion, while a's upgrade had moved %d components (%v)", repaired.Round(time.Millisecond), len(u.Done), u.Done)

	ea.eventually("a on 1.6.0, upgrade done", 240*time.Second, func() (bool, error) {
		st := ea.live().Status
		return st.Upgrade == nil && st.Version == "1.6.0" && st.Phase == v1alpha1.PhaseRunning, nil
	})
	h := ea.live().Status.History
	if last := h[len(h)-1]; last.Action != "upgrade" || last.Version != "1.6.0" {
		t.Errorf("a's last revision: %+v, want an upgrade to 1.6.0", last)
	}
}
