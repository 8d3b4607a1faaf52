/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
	"github.com/coomia-dip/kubectl-onto/pkg/upgrade"
)

// scaleEnv is one test's platform on the test cluster, with a count of the requests
// that write to it.
type scaleEnv struct {
	t        *testing.T
	cluster  *testcluster.Cluster
	clients  *kube.Clients
	platform *v1alpha1.OntoPlatform
	// writes counts requests that change the platform: not reads, dry runs or the lock
	// lease.
	writes atomic.Int64

	mu     sync.Mutex
	events []apply.Event
}

// newScaleEnv installs examples/minimal.yaml, changed by edit, into a fresh namespace.
func newScaleEnv(t *testing.T, edit func(*v1alpha1.OntoPlatform)) *scaleEnv {
	t.Helper()
	c := testcluster.New(t)
	e := &scaleEnv{t: t, cluster: c}
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && !strings.Contains(r.URL.RawQuery, "dryRun=") && !strings.HasPrefix(r.URL.Path, "/apis/coordination.k8s.io/") {
				e.writes.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	var err error
	if e.clients, err = kube.New(cfg); err != nil {
		t.Fatal(err)
	}
	e.platform = ontotest.Example(t, "minimal.yaml", c.Namespace(t))
	if edit != nil {
		edit(e.platform)
		if err := validator(t).Validate(e.platform); err != nil {
			t.Fatal(err)
		}
	}
	ontotest.Install(t, e.clients, e.platform)
	return e
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func validator(t *testing.T) *spec.Validator {
	t.Helper()
	v, err := spec.NewValidator(nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// scale runs a scale of the env's platform (found as the namespace's only one),
// recording its events.
func (e *scaleEnv) scale(component string, replicas, minReplicas, maxReplicas *int32) (*upgrade.ScaleResult, error) {
	e.t.Helper()
	return e.scaleWith(ontotest.ApplyOptions(), component, replicas, minReplicas, maxReplicas)
}

func (e *scaleEnv) scaleWith(opts apply.Options, component string, replicas, minReplicas, maxReplicas *int32) (*upgrade.ScaleResult, error) {
	e.t.Helper()
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	a := &apply.Applier{Clients: e.clients, Now: time.Now, Observer: func(ev apply.Event) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.events = append(e.events, ev)
	}}
	return upgrade.Scale{Applier: a, Validator: validator(e.t), Namespace: e.platform.Namespace, Component: component,
		Replicas: replicas, MinReplicas: minReplicas, MaxReplicas: maxReplicas, Options: opts}.Run(e.t.Context())
}

// warnings are the messages of the last scale's Warning events.
func (e *scaleEnv) warnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.events {
		if ev.Type == apply.EventWarning {
			out = append(out, ev.Message)
		}
	}
	return out
}

func (e *scaleEnv) live() *v1alpha1.OntoPlatform {
	e.t.Helper()
	return ontotest.Live(e.t, e.clients, e.platform.Namespace, e.platform.Name)
}

// lastRevision checks the newest revision: number, action scale, Succeeded, and a
// snapshot whose spec check accepts.
func (e *scaleEnv) lastRevision(n int64, check func(*v1alpha1.OntoPlatformSpec) bool) {
	e.t.Helper()
	h := e.live().Status.History
	last := h[len(h)-1]
	if last.Revision != n || last.Action != upgrade.ActionScale || last.Result != v1alpha1.RevisionSucceeded || last.Snapshot != apply.RevisionSecretName(e.platform.Name, n) {
		e.t.Fatalf("newest revision %+v; want %d, scale, Succeeded, with a snapshot", last, n)
	}
	snap, err := (&apply.Applier{Clients: e.clients}).LoadRevision(e.t.Context(), e.platform.Namespace, e.platform.Name, n)
	if err != nil {
		e.t.Fatal(err)
	}
	if !check(&snap.Spec) {
		e.t.Fatalf("snapshot of revision %d does not hold the scale: %+v", n, snap.Spec)
	}
}

// TestScaleDeployment: scale a component without autoscaling from 1 to 2 replicas:
// the Deployment scales, a disruption budget appears, a scale revision with a
// snapshot of the new spec is recorded, spec.patches keep their effect, and the file
// is said to differ. Scaling to the same value again writes nothing; a component
// whose configuration follows its replicas is refused; history lists both revisions.
func TestScaleDeployment(t *testing.T) {
	t.Parallel()
	e := newScaleEnv(t, func(p *v1alpha1.OntoPlatform) {
		p.Spec.Patches = []v1alpha1.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\n  annotations:\n    onto.test/patched: \"yes\"\n"}}
	})
	ctx, ns := t.Context(), e.platform.Namespace

	res, err := e.scale("gateway", ptr.To[int32](2), nil, nil)
	if err != nil {
		t.Fatalf("scale gateway --replicas 2: %v", err)
	}
	if !res.Changed || res.FromRevision != 1 || res.Change != "replicas 1 → 2" {
		t.Fatalf("result %+v; want changed from revision 1, replicas 1 → 2", res)
	}
	dep, err := e.cluster.Kube.AppsV1().Deployments(ns).Get(ctx, "gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 2 || dep.Annotations["onto.test/patched"] != "yes" {
		t.Fatalf("Deployment gateway: replicas %d, annotations %v; want 2 and the patch's annotation", *dep.Spec.Replicas, dep.Annotations)
	}
	if _, err := e.cluster.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "gateway", metav1.GetOptions{}); err != nil {
		t.Fatalf("PodDisruptionBudget gateway: %v", err)
	}
	e.lastRevision(2, func(s *v1alpha1.OntoPlatformSpec) bool {
		return s.Gateway.Replicas != nil && *s.Gateway.Replicas == 2 && len(s.Patches) == 1
	})
	if r := e.live().Spec.Gateway.Replicas; r == nil || *r != 2 {
		t.Fatalf("OntoPlatform spec.gateway.replicas = %v, want 2", r)
	}
	if w := e.warnings(); len(w) != 1 || !strings.Contains(w[0], "spec.gateway.replicas: 2") || !strings.Contains(w[0], "next apply -f reverts it") {
		t.Fatalf("warnings %q; want one saying the file differs", w)
	}

	// The same value again: nothing to write, no revision.
	e.writes.Store(0)
	res, err = e.scale("gateway", ptr.To[int32](2), nil, nil)
	if err != nil {
		t.Fatalf("second scale: %v", err)
	}
	if res.Changed || res.FromRevision != 2 || e.writes.Load() != 0 {
		t.Fatalf("second scale: changed %v from revision %d with %d writes; want nothing written", res.Changed, res.FromRevision, e.writes.Load())
	}
	if w := e.warnings(); len(w) != 0 {
		t.Fatalf("second scale warned %q", w)
	}

	// Kafka's replication factors follow its replica count: that is a configuration change.
	_, err = e.scale("kafka", ptr.To[int32](2), nil, nil)
	var se *upgrade.ScopeError
	if !errors.As(err, &se) || len(se.Beyond) == 0 || !strings.Contains(err.Error(), "ConfigMap") || e.writes.Load() != 0 {
		t.Fatalf("scale kafka = %v with %d writes; want a refusal naming its ConfigMap, nothing written", err, e.writes.Load())
	}
	t.Logf("scale kafka: %v", err)
	// From 3 replicas the controllers are dedicated: the transition rule refuses it
	// offline, naming the field, before anything is written.
	_, err = e.scale("kafka", ptr.To[int32](3), nil, nil)
	var transition *spec.Error
	if !errors.As(err, &transition) || !strings.Contains(err.Error(), "spec.infrastructure.kafka.replicas") || e.writes.Load() != 0 {
		t.Fatalf("scale kafka --replicas 3 = %v with %d writes; want the transition refused at spec.infrastructure.kafka.replicas, nothing written", err, e.writes.Load())
	}

	// Someone changed the stored spec by hand (through the cluster's own client, not
	// counted): scaling from revision 2 would revert it, so scale refuses, with
	// --force-conflicts too, which would take the field back.
	if _, err := e.cluster.Dynamic.Resource(v1alpha1.GroupVersion.WithResource("ontoplatforms")).Namespace(ns).Patch(ctx, e.platform.Name,
		types.MergePatchType, []byte(`{"spec":{"observability":{"logging":{"level":"DEBUG"}}}}`), metav1.PatchOptions{FieldManager: "by-hand"}); err != nil {
		t.Fatal(err)
	}
	force := ontotest.ApplyOptions()
	force.ForceConflicts = true
	_, err = e.scaleWith(force, "gateway", ptr.To[int32](3), nil, nil)
	if !errors.As(err, &se) || len(se.Drift) == 0 || !strings.Contains(err.Error(), "drifted from revision 2") ||
		!strings.Contains(err.Error(), "(spec.observability.logging.level) would change") || e.writes.Load() != 0 {
		t.Fatalf("scale after a change by hand = %v with %d writes; want a refusal naming the drift, nothing written", err, e.writes.Load())
	}

	hist, err := upgrade.History(ctx, e.clients, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Revisions) != 2 || hist.Name != e.platform.Name {
		t.Fatalf("history %+v; want 2 revisions of %s", hist, e.platform.Name)
	}
	for i, action := range []string{"apply", upgrade.ActionScale} {
		r := hist.Revisions[i]
		if r.Revision != int64(i+1) || r.Action != action || r.Result != v1alpha1.RevisionSucceeded || r.Snapshot == "" || !strings.HasPrefix(r.Digest, "sha256:") || r.SnapshotError != "" {
			t.Errorf("history entry %d: %+v; want revision %d, %s, Succeeded, with a readable snapshot", i, r, i+1, action)
		}
	}
}

// TestScaleAutoscaled: an autoscaled component's bounds change its
// HorizontalPodAutoscaler (and add a disruption budget above one replica); --replicas
// is refused, naming --min and --max, with nothing written.
func TestScaleAutoscaled(t *testing.T) {
	t.Parallel()
	e := newScaleEnv(t, func(p *v1alpha1.OntoPlatform) {
		p.Spec.IntelligencePlane.AgentRuntime.Autoscaling = &v1alpha1.AutoscalingSpec{Enabled: true, MinReplicas: 1, MaxReplicas: 3}
	})
	ctx, ns := t.Context(), e.platform.Namespace

	e.writes.Store(0)
	_, err := e.scale("agent-runtime", ptr.To[int32](2), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "--min and --max") || e.writes.Load() != 0 {
		t.Fatalf("scale agent-runtime --replicas 2 = %v with %d writes; want a refusal naming --min and --max", err, e.writes.Load())
	}
	t.Logf("scale agent-runtime --replicas 2: %v", err)

	res, err := e.scale("agent-runtime", nil, ptr.To[int32](2), ptr.To[int32](4))
	if err != nil {
		t.Fatalf("scale agent-runtime --min 2 --max 4: %v", err)
	}
	if !res.Changed || res.Change != "autoscaling.minReplicas 1 → 2, autoscaling.maxReplicas 3 → 4" {
		t.Fatalf("result %+v", res)
	}
	hpa, err := e.cluster.Kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "agent-runtime", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *hpa.Spec.MinReplicas != 2 || hpa.Spec.MaxReplicas != 4 {
		t.Fatalf("HorizontalPodAutoscaler agent-runtime: %d..%d, want 2..4", *hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
	}
	if _, err := e.cluster.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "agent-runtime", metav1.GetOptions{}); err != nil {
		t.Fatalf("PodDisruptionBudget agent-runtime: %v", err)
	}
	e.lastRevision(2, func(s *v1alpha1.OntoPlatformSpec) bool {
		a := s.IntelligencePlane.AgentRuntime.Autoscaling
		return a != nil && a.MinReplicas == 2 && a.MaxReplicas == 4
	})
	if w := e.warnings(); len(w) != 1 || !strings.Contains(w[0], "spec.intelligencePlane.agentRuntime.autoscaling.minReplicas: 2") {
		t.Fatalf("warnings %q", w)
	}
}
