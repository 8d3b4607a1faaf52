/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	testcluster.Main(m)
}

// syncBuffer is an audit log the test reads while the manager writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type watchEnv struct {
	t       *testing.T
	c       *testcluster.Cluster
	clients *kube.Clients
	p       *v1alpha1.OntoPlatform
	audit   *syncBuffer
	// requests counts what the watch sends; sent lists each request as "METHOD path".
	requests *bench.Counter
	sent     *requestLog
	// restart stops the running watch and starts another with the same options, as
	// a restarted pod or a new leader does: the memory of the first is gone.
	restart func()
}

// requestLog records the method and path of each request of the transports it wraps.
type requestLog struct {
	mu   sync.Mutex
	sent []string
	// uris are the same requests' paths with their queries.
	uris []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.sent = append(l.sent, r.Method+" "+r.URL.Path)
		l.uris = append(l.uris, r.Method+" "+r.URL.RequestURI())
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// count is how many requests were sent whose method and URI (path and query, as
// sent, escaped) contain every one of parts.
func (l *requestLog) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, u := range l.uris {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(u, p) }) {
			n++
		}
	}
	return n
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startWatch installs the small platform with the CLI's library path, then runs a
// watch of its namespace in-process until the test ends, with a periodic pass every
// 2 s (not 5 min).
func startWatch(t *testing.T) *watchEnv {
	t.Helper()
	return startWatchWith(t, testcluster.New(t), nil, func(o *controller.Options) { o.HealthyRequeue = 2 * time.Second })
}

// startWatchWith is startWatch on cluster c, with a spec edit before the install
// (spec) and the watch's options changed (opts); either may be nil. The requests the
// watch sends are counted.
func startWatchWith(t *testing.T, c *testcluster.Cluster, spec func(*v1alpha1.OntoPlatformSpec), opts func(*controller.Options)) *watchEnv {
	t.Helper()
	return startWatchAs(t, c, spec, opts, false)
}

// startWatchAs is startWatchWith; with installedIdentity, the watch runs with the
// token of the ServiceAccount `watch install --namespaces <the platform's>` creates,
// as it does in a cluster, not with the admin's credentials.
func startWatchAs(t *testing.T, c *testcluster.Cluster, spec func(*v1alpha1.OntoPlatformSpec), opts func(*controller.Options), installedIdentity bool) *watchEnv {
	t.Helper()
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", c.Namespace(t))
	ontotest.Small(&p.Spec)
	if spec != nil {
		spec(&p.Spec)
	}
	ontotest.Install(t, clients, p)
	// Runs after the watch stopped (cleanups run last first): without the watch's
	// finalizer the namespace's deletion does not wait for an uninstall.
	t.Cleanup(func() {
		ri, err := clients.Resource(platformObject(p))
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = ri.Patch(ctx, p.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	e := &watchEnv{t: t, c: c, clients: clients, p: p, audit: &syncBuffer{}, requests: bench.NewCounter(), sent: &requestLog{}}
	cfg := rest.CopyConfig(c.Config)
	if installedIdentity {
		cfg = installWatch(t, c, p.Namespace).asServiceAccount()
	}
	cfg.Wrap(e.requests.Wrap)
	cfg.Wrap(e.sent.wrap)
	watchClients, err := kube.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := controller.Options{
		Namespaces: []string{p.Namespace}, Drift: controller.DriftRepair, Audit: controller.NewAuditLog(e.audit),
		Holder: "watch-test", LockTTL: 15 * time.Second, Catalog: ontotest.Catalog(t), MaxConcurrentReconciles: 2,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if opts != nil {
		opts(&o)
	}
	start := func() (stop func()) {
		mgr, err := controller.NewManager(cfg, watchClients, o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		}
	}
	stop := start()
	e.restart = func() {
		stop()
		stop = start()
	}
	t.Cleanup(func() { stop() })
	return e
}

// eventually polls cond until it holds; an error from cond is "not yet". It fails
// the test after timeout, with the audit log.
func (e *watchEnv) eventually(what string, timeout time.Duration, cond func() (bool, error)) {
	e.t.Helper()
	if err := testcluster.Eventually(e.t.Context(), timeout, func(context.Context) (bool, error) { return cond() }); err != nil {
		e.t.Fatalf("%s: %v\naudit log:\n%s", what, err, e.audit.String())
	}
}

// staysTrue checks cond at every poll for d, and fails the test, with the audit
// log, at the first look where it does not hold or returns an error.
func (e *watchEnv) staysTrue(what string, d time.Duration, cond func() (bool, error)) {
	e.t.Helper()
	if err := testcluster.StaysTrue(e.t.Context(), d, func(context.Context) (bool, error) { return cond() }); err != nil {
		e.t.Fatalf("%s: %v\naudit log:\n%s", what, err, e.audit.String())
	}
}

func (e *watchEnv) deployment(name string) (*appsv1.Deployment, error) {
	return e.clients.Kube.AppsV1().Deployments(e.p.Namespace).Get(e.t.Context(), name, metav1.GetOptions{})
}

func (e *watchEnv) live() *v1alpha1.OntoPlatform {
	return ontotest.Live(e.t, e.clients, e.p.Namespace, e.p.Name)
}

// TestWatchKeepsThePlatform: the watch adds its finalizer, recreates a deleted
// Deployment, takes back an image another manager set (audit line, Event), applies a
// spec edited in the cluster (GitOps) and leaves alone what a CLI run applied, then
// uninstalls the platform when it is deleted, keeping its volumes.
func TestWatchKeepsThePlatform(t *testing.T) {
	t.Parallel()
	e := startWatch(t)
	ctx := t.Context()
	ns := e.p.Namespace

	e.eventually("finalizer added", 30*time.Second, func() (bool, error) {
		return contains(e.live().Finalizers, apply.Finalizer), nil
	})

	t.Run("deleted deployment is recreated", func(t *testing.T) {
		old, err := e.deployment("gateway")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.clients.Kube.AppsV1().Deployments(ns).Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("gateway recreated", 60*time.Second, func() (bool, error) {
			d, err := e.deployment("gateway")
			return err == nil && d.UID != old.UID, err
		})
	})

	t.Run("image set by another manager is taken back", func(t *testing.T) {
		want, err := e.deployment("nessie")
		if err != nil {
			t.Fatal(err)
		}
		image := want.Spec.Template.Spec.Containers[0].Image
		patch := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "nessie", "namespace": ns},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "nessie", "image": "example.com/other:1"}},
			}}},
		}}
		if _, err := e.clients.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns).
			Apply(ctx, "nessie", patch, metav1.ApplyOptions{FieldManager: "other-tool", Force: true}); err != nil {
			t.Fatal(err)
		}
		e.eventually("nessie's image taken back", 60*time.Second, func() (bool, error) {
			d, err := e.deployment("nessie")
			return err == nil && d.Spec.Template.Spec.Containers[0].Image == image, err
		})
		e.eventually("audit line for nessie", 10*time.Second, func() (bool, error) {
			return strings.Contains(e.audit.String(), `"object":"Deployment `+ns+`/nessie"`), nil
		})
		e.eventually("an Event on the platform", 10*time.Second, func() (bool, error) {
			list, err := e.clients.Kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + e.p.Name})
			if err != nil {
				return false, err
			}
			for _, ev := range list.Items {
				if ev.Reason == "Reconciled" && strings.Contains(ev.Note, "nessie") {
					return true, nil
				}
			}
			return false, nil
		})
	})

	t.Run("spec edited in the cluster is applied", func(t *testing.T) {
		// Two replicas, and an Ingress: a kind the platform did not have.
		patch := []byte(`{"spec":{"gateway":{"replicas":2,"ingress":{"enabled":true,"host":"onto.example.com"}}}}`)
		ri, err := e.clients.Resource(platformObject(e.p))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Patch(ctx, e.p.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "gitops"}); err != nil {
			t.Fatal(err)
		}
		e.eventually("gateway at 2 replicas, platform converged", 90*time.Second, func() (bool, error) {
			d, err := e.deployment("gateway")
			if err != nil {
				return false, err
			}
			p := e.live()
			return *d.Spec.Replicas == 2 && p.Status.ObservedGeneration == p.Generation && p.Status.Phase == v1alpha1.PhaseRunning, nil
		})
		// The new kind is listed on the parent, or prune and uninstall would miss it.
		if kinds := e.live().Annotations["applyset.kubernetes.io/contains-group-kinds"]; !strings.Contains(kinds, "Ingress.networking.k8s.io") {
			t.Fatalf("contains-group-kinds %q lacks the Ingress the watch created", kinds)
		}
		// The converged spec is a revision, so later passes render it.
		if h := e.live().Status.History; len(h) == 0 || h[len(h)-1].Action != "watch" || h[len(h)-1].Snapshot == "" {
			t.Fatalf("history after the watch applied a spec change: %+v", h)
		}
	})

	t.Run("an idle platform costs no dry-run and no write, not even the lock, and no list", func(t *testing.T) {
		// Converged, and every object planned unchanged once since: two periodic
		// passes in a row (two GETs each) sent no dry-run, no write and no lock.
		quiet := bench.Counts{}
		e.requests.Take()
		e.eventually("two idle periodic passes in a row", 60*time.Second, func() (bool, error) {
			got := e.requests.Take()
			if got.Writes() != 0 || got[bench.VerbDryRunPatch] != 0 || got[bench.VerbLock] != 0 {
				quiet = bench.Counts{}
				return false, nil
			}
			addCounts(quiet, got)
			return quiet[bench.VerbGet] >= 2*2, nil
		})
		// Three periodic passes or more, each one idle.
		counts := bench.Counts{}
		e.staysTrue("an idle platform's periodic passes", 7*time.Second, func() (bool, error) {
			addCounts(counts, e.requests.Take())
			if counts.Writes() != 0 || counts[bench.VerbDryRunPatch] != 0 || counts[bench.VerbLock] != 0 {
				return false, fmt.Errorf("they sent %s; want no dry-run, no write, no lock", counts)
			}
			return true, nil
		})
		// The platform's objects come from the watch's cache; only the namespace and
		// the CRD, which it does not cache, are read: two GETs a pass.
		if counts[bench.VerbList] != 0 || counts[bench.VerbGet] == 0 || counts[bench.VerbGet] > 2*5 {
			t.Fatalf("7 s of periodic passes every 2 s sent %s; want no list, and only the namespace's and CRD's GETs", counts)
		}
		t.Logf("idle, 7 s of passes every 2 s: %s", counts)

		// From idle, one object changed by another manager: its repair reads the
		// cache and dry-runs only that object, once (the idle check's plan is the
		// locked pass's); the passes its rollout brings dry-run only it again, as its
		// status moves.
		lockPath := "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + apply.LockName(e.p.Name)
		releases := e.sent.count("DELETE " + lockPath)
		if _, err := e.clients.Kube.AppsV1().Deployments(ns).Patch(ctx, "data-service", types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"data-service","image":"example.com/other:2"}]}}}}`),
			metav1.PatchOptions{FieldManager: "other-tool"}); err != nil {
			t.Fatal(err)
		}
		e.eventually("data-service's image taken back", 30*time.Second, func() (bool, error) {
			d, err := e.deployment("data-service")
			return err == nil && d.Spec.Template.Spec.Containers[0].Image != "example.com/other:2", err
		})
		// The repair's pass writes the status under the lock, then releases it.
		e.eventually("the repair's pass released the lock", 30*time.Second, func() (bool, error) {
			return e.sent.count("DELETE "+lockPath) > releases, nil
		})
		counts = e.requests.Take()
		t.Logf("the repair of one object from idle: %s", counts)
		// Each pass dry-runs only the objects whose resourceVersion moved (the repaired
		// Deployment, whose status moves during its rollout), never the platform again;
		// how many passes the rollout brings depends on the machine's speed, so the
		// bound is a whole plan's worth, which the watch sent before it kept its memo
		// through writes.
		objects := len(ontotest.Desired(t, e.live()).Objects())
		if counts[bench.VerbList] != 0 || counts[bench.VerbDryRunPatch] >= objects/2 {
			t.Errorf("the repair of one object and its rollout sent %s; want no list, and far fewer dry-runs than the platform's %d objects", counts, objects)
		}
	})

	t.Run("a CLI run beside the watch", func(t *testing.T) {
		// The file as the cluster holds it (the gateway's replicas are gitops's now),
		// with one more nessie.
		p := e.live()
		p.Spec.DataPlane.Nessie.Replicas = ptr.To(int32(2))
		d := ontotest.Desired(t, p)
		opts := ontotest.ApplyOptions()
		opts.Release, opts.LockWait = ontotest.Release(t, p.Spec.Version), 60*time.Second
		if _, err := (&apply.Applier{Clients: e.clients, Now: time.Now}).Apply(ctx, d, opts); err != nil {
			t.Fatalf("CLI apply while watching: %v", err)
		}
		// The watch must not put back the previous revision's replicas.
		e.staysTrue("nessie's replicas after the CLI applied 2 beside the watch", 3*time.Second, func() (bool, error) {
			dep, err := e.deployment("nessie")
			if err != nil {
				return false, err
			}
			if *dep.Spec.Replicas != 2 {
				return false, fmt.Errorf("nessie has %d replicas", *dep.Spec.Replicas)
			}
			return true, nil
		})
	})

	t.Run("a CLI run holding the lock shows in the status, and the watch applies after it", func(t *testing.T) {
		opts := ontotest.ApplyOptions()
		opts.Holder, opts.LockTTL = "kubectl-onto@laptop/42", 8*time.Second
		_, release, err := (&apply.Applier{Clients: e.clients, Now: time.Now}).Lock(ctx, ns, e.p.Name, opts)
		if err != nil {
			t.Fatal(err)
		}
		released := false
		defer func() {
			if !released {
				release()
			}
		}()
		ri, err := e.clients.Resource(platformObject(e.p))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Patch(ctx, e.p.Name, types.MergePatchType, []byte(`{"spec":{"dataPlane":{"nessie":{"replicas":3}}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("Progressing CLIRunInProgress naming the holder", 20*time.Second, func() (bool, error) {
			c := meta.FindStatusCondition(e.live().Status.Conditions, v1alpha1.ConditionProgressing)
			return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonCLIRunInProgress && strings.Contains(c.Message, "kubectl-onto@laptop/42"), nil
		})
		if dep, err := e.deployment("nessie"); err != nil || *dep.Spec.Replicas == 3 {
			t.Fatalf("nessie written under another run's lock: %v", err)
		}
		release()
		released = true
		e.eventually("the spec applied after the CLI run", 40*time.Second, func() (bool, error) {
			dep, err := e.deployment("nessie")
			c := meta.FindStatusCondition(e.live().Status.Conditions, v1alpha1.ConditionProgressing)
			return err == nil && *dep.Spec.Replicas == 3 && c != nil && c.Reason != v1alpha1.ReasonCLIRunInProgress, err
		})
	})

	t.Run("a drift fight stops the repairs", func(t *testing.T) {
		scale := func(n int32) {
			t.Helper()
			// As kubectl scale: read, write, again on a conflict (the watch writes
			// the same Deployment).
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				sc, err := e.clients.Kube.AppsV1().Deployments(ns).GetScale(ctx, "data-service", metav1.GetOptions{})
				if err != nil {
					return err
				}
				sc.Spec.Replicas = n
				_, err = e.clients.Kube.AppsV1().Deployments(ns).UpdateScale(ctx, "data-service", sc, metav1.UpdateOptions{FieldManager: "kubectl-scale"})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		replicas := func() int32 {
			d, err := e.deployment("data-service")
			if err != nil {
				t.Fatal(err)
			}
			return *d.Spec.Replicas
		}
		for i := range 3 {
			scale(3)
			e.eventually("data-service scaled back, take-back "+string(rune('1'+i)), 60*time.Second, func() (bool, error) { return replicas() == 1, nil })
		}
		scale(3)
		e.eventually("Degraded=True reason DriftFight", 60*time.Second, func() (bool, error) {
			for _, c := range e.live().Status.Conditions {
				if c.Type == v1alpha1.ConditionDegraded && c.Status == metav1.ConditionTrue && c.Reason == controller.ReasonDriftFight {
					return strings.Contains(c.Message, "kubectl-scale") && strings.Contains(c.Message, "data-service"), nil
				}
			}
			return false, nil
		})
		if got := replicas(); got != 3 {
			t.Fatalf("data-service has %d replicas: the watch went on repairing it after the fight", got)
		}
	})

	t.Run("deleting the platform uninstalls it", func(t *testing.T) {
		ri, err := e.clients.Resource(platformObject(e.p))
		if err != nil {
			t.Fatal(err)
		}
		if err := ri.Delete(ctx, e.p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("platform gone", 120*time.Second, func() (bool, error) {
			_, err := ri.Get(ctx, e.p.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if _, err := e.deployment("gateway"); !apierrors.IsNotFound(err) {
			t.Fatalf("gateway Deployment after the platform's deletion: %v", err)
		}
		if _, err := e.clients.Kube.NetworkingV1().Ingresses(ns).Get(ctx, "gateway", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the Ingress the watch added is left after the platform's deletion: %v", err)
		}
		pvcs, err := e.clients.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pvcs.Items) == 0 {
			t.Fatalf("the platform's volumes were deleted with it")
		}
	})
}

func platformObject(p *v1alpha1.OntoPlatform) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	obj.SetNamespace(p.Namespace)
	obj.SetName(p.Name)
	return obj
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestWatchNamespaceDeleted: deleting the namespace of a watched platform finishes: the
// watch drops its finalizer instead of an ordered uninstall whose lock it could not
// create there.
func TestWatchNamespaceDeleted(t *testing.T) {
	t.Parallel()
	e := startWatch(t)
	e.eventually("finalizer added", 30*time.Second, func() (bool, error) {
		return contains(e.live().Finalizers, apply.Finalizer), nil
	})
	if err := e.clients.Kube.CoreV1().Namespaces().Delete(t.Context(), e.p.Namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("namespace gone", 90*time.Second, func() (bool, error) {
		_, err := e.clients.Kube.CoreV1().Namespaces().Get(t.Context(), e.p.Namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestWatchFirstPassReadsNoWorkload: the first pass over a platform a CLI run
// installed plans from the API server's lists (the cache strips managedFields) and
// takes the workloads' readiness, for its check and the status, from those lists: no
// GET of a Deployment or StatefulSet, no dry-run, and the lock taken and released.
// Before, each workload was read twice (the check, then the status).
func TestWatchFirstPassReadsNoWorkload(t *testing.T) {
	t.Parallel()
	e := startWatchWith(t, testcluster.New(t), nil, func(o *controller.Options) { o.HealthyRequeue = 10 * time.Minute })
	workloads := 0
	for _, o := range ontotest.Desired(t, e.p).Objects() {
		if k := o.GetKind(); k == "Deployment" || k == "StatefulSet" {
			workloads++
		}
	}
	lockPrefix := "/apis/coordination.k8s.io/v1/namespaces/" + e.p.Namespace + "/leases"
	e.eventually("the first pass released its lock", 60*time.Second, func() (bool, error) {
		for _, r := range e.sent.all() {
			if strings.HasPrefix(r, "DELETE "+lockPrefix+"/") {
				return true, nil
			}
		}
		return false, nil
	})
	if workloads < 3 {
		t.Errorf("the platform has %d workloads, want 3 or more", workloads)
	}
	// Nor in what the pass sends after the release, for a second.
	counts := bench.Counts{}
	e.staysTrue("the first pass, and a second after its release", time.Second, func() (bool, error) {
		var workloadGets []string
		for _, r := range e.sent.all() {
			for _, kind := range []string{"deployments", "statefulsets"} {
				if strings.HasPrefix(r, "GET /apis/apps/v1/namespaces/"+e.p.Namespace+"/"+kind+"/") {
					workloadGets = append(workloadGets, r)
				}
			}
		}
		if len(workloadGets) != 0 {
			return false, fmt.Errorf("the first pass over %d workloads read %d of them by GET (%v); want none: the plan's lists hold them", workloads, len(workloadGets), workloadGets)
		}
		addCounts(counts, e.requests.Take())
		if counts[bench.VerbDryRunPatch] != 0 {
			return false, fmt.Errorf("the first pass sent %s: want no dry-run (the objects are as the install applied them)", counts)
		}
		return true, nil
	})
	t.Logf("the first pass over %d workloads: %s", workloads, counts)
	if counts[bench.VerbList] == 0 {
		t.Errorf("the first pass sent %s: want lists (the plan's)", counts)
	}
	if p := e.live(); p.Status.Phase != v1alpha1.PhaseRunning || p.Status.ReadyComponents == "" {
		t.Errorf("status after the first pass: phase %s, ready %q", p.Status.Phase, p.Status.ReadyComponents)
	}
}

// TestWatchEventPerObjectAndOptionalKinds: with no periodic pass for 10 minutes, a
// deleted ServiceMonitor (a CRD's kind, watched because the cluster serves it) and a
// deleted ServiceAccount come back from their own watch events, and each repair is an
// Event of its own, whose related object is the object repaired: not one Event
// merged for the platform.
func TestWatchEventPerObjectAndOptionalKinds(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	e := startWatchWith(t, c, func(s *v1alpha1.OntoPlatformSpec) { s.Observability.Metrics.ServiceMonitor = true },
		func(o *controller.Options) { o.HealthyRequeue = 10 * time.Minute })
	ctx, ns := t.Context(), e.p.Namespace
	e.eventually("finalizer added", 30*time.Second, func() (bool, error) {
		return contains(e.live().Finalizers, apply.Finalizer), nil
	})
	monitors := e.clients.Dynamic.Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}).Namespace(ns)
	list, err := monitors.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("the platform's ServiceMonitors: %v, %d of them; want 1", err, len(list.Items))
	}
	monitor := list.Items[0]
	account := "gateway"
	oldAccount, err := e.clients.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, account, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Settled: the install's own passes are over. The watch's first pass took the
	// lock and released it, and the platform is Ready at its generation.
	lock := "DELETE /apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + apply.LockName(e.p.Name)
	e.eventually("the install's passes over", 60*time.Second, func() (bool, error) {
		if e.sent.count(lock) == 0 {
			return false, nil
		}
		if _, err := e.clients.Kube.CoordinationV1().Leases(ns).Get(ctx, apply.LockName(e.p.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, err
		}
		p := e.live()
		ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
		return p.Status.ObservedGeneration == p.Generation && ready != nil && ready.Status == metav1.ConditionTrue, nil
	})
	// One after the other: a pass for either would repair both.
	if err := monitors.Delete(ctx, monitor.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the ServiceMonitor back, from its own watch event", 30*time.Second, func() (bool, error) {
		m, err := monitors.Get(ctx, monitor.GetName(), metav1.GetOptions{})
		return err == nil && m.GetUID() != monitor.GetUID(), client404(err)
	})
	if err := e.clients.Kube.CoreV1().ServiceAccounts(ns).Delete(ctx, account, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the ServiceAccount back", 30*time.Second, func() (bool, error) {
		a, err := e.clients.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, account, metav1.GetOptions{})
		return err == nil && a.UID != oldAccount.UID, client404(err)
	})
	related := map[string]string{}
	e.eventually("an Event for each object repaired", 10*time.Second, func() (bool, error) {
		evs, err := e.platformEvents("Reconciled")
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Related != nil {
				related[ev.Related.Kind+"/"+ev.Related.Name] = ev.Note
			}
		}
		_, m := related["ServiceMonitor/"+monitor.GetName()]
		_, a := related["ServiceAccount/"+account]
		return m && a, nil
	})
	for obj, note := range related {
		if !strings.Contains(note, strings.Replace(obj, "/", " "+ns+"/", 1)) {
			t.Errorf("the Event related to %s says %q, not that object", obj, note)
		}
	}
}

// addCounts adds the counts of more into total.
func addCounts(total, more bench.Counts) {
	for verb, n := range more {
		total[verb] += n
	}
}
