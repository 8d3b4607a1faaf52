/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// Options configure a watch.
type Options struct {
	// Namespaces to watch; empty watches every namespace.
	Namespaces []string
	Drift      DriftMode
	// MaxConcurrentReconciles bounds the platforms reconciled at once.
	MaxConcurrentReconciles int
	// LeaderElect makes one of several replicas the writer, by a Lease named
	// LeaderElectionID in LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	// MetricsBindAddress and HealthProbeBindAddress serve /metrics and
	// /healthz, /readyz; "0" turns one off.
	MetricsBindAddress     string
	HealthProbeBindAddress string
	Audit                  *AuditLog
	Holder                 string
	LockTTL                time.Duration
	// HealthyRequeue is the periodic pass over a healthy platform (5 min).
	HealthyRequeue time.Duration
	Catalog        *release.Catalog
	Log            *slog.Logger
	// NodeGrace: the Deployment pods of a node NotReady for longer are evicted; 0 is
	// DefaultNodeGrace.
	NodeGrace time.Duration
	// EvictedPodTTL: evicted pods are deleted this long after their eviction; 0 is
	// DefaultEvictedPodTTL, a negative value deletes them at once (tests).
	EvictedPodTTL time.Duration
	// Upgrade holds the canary settings of the upgrades the watch runs; nil is the
	// upgrade's defaults.
	Upgrade *UpgradeSettings
}

// UpgradeSettings are the canary settings of the watch's upgrades (`upgrade`'s flags
// of the same names).
type UpgradeSettings struct {
	CanarySoak, CanaryTimeout time.Duration
	Atomic                    bool
}

// LeaderElectionID names the leader election Lease.
const LeaderElectionID = "kubectl-onto-watch"

// Name of the controller, in metrics, logs and as the Events' reporting controller.
const Name = "kubectl-onto-watch"

// Error backoff per platform: the first retry after 30 s, doubling to 5 min.
const (
	errorBackoffBase = 30 * time.Second
	errorBackoffMax  = 5 * time.Minute
)

// Scheme holds the kinds the watch reads.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// ownedKinds are the kinds of the platforms' objects whose events bring their platform
// back: its workloads (drift, rollouts), its Jobs (MinIO's user setup; cached so an
// idle check need not read them from the API server), and what the workloads depend on.
func ownedKinds() []client.Object {
	return []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &batchv1.Job{}, &corev1.Service{}, &corev1.ConfigMap{},
		&corev1.ServiceAccount{}, &autoscalingv2.HorizontalPodAutoscaler{}, &policyv1.PodDisruptionBudget{},
		&corev1.Secret{}, &networkingv1.NetworkPolicy{}, &networkingv1.Ingress{}, &corev1.ResourceQuota{}}
}

// optionalKinds are the rendered kinds whose API a cluster may not serve: Prometheus
// Operator's ServiceMonitor and cert-manager's Certificate. Those the cluster serves
// are watched too, by their metadata alone (all a pass needs to know is that one
// changed or went), so a deleted ServiceMonitor comes back at once, not at the next
// periodic pass.
var optionalKinds = []schema.GroupVersionKind{
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"},
	{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"},
}

// servedOptionalKinds are the optionalKinds the cluster serves, as metadata-only
// objects for the cache and the watches. A discovery failure leaves the kind out: it
// is still repaired at the periodic pass.
func servedOptionalKinds(clients *kube.Clients, log *slog.Logger) []client.Object {
	if clients == nil || clients.Mapper == nil {
		return nil
	}
	var out []client.Object
	for _, gvk := range optionalKinds {
		if _, err := clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if log != nil && !meta.IsNoMatchError(err) {
				log.Warn("discover "+gvk.Kind, "err", err)
			}
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		out = append(out, obj)
	}
	return out
}

// cacheOptions are the watch's cache: kinds, each once, with what the cache keeps of
// them. Only objects of a platform's inventory are cached, so a cluster's other
// workloads cost no memory, and of those only what a pass reads (cacheTransform).
// ByObject is a map by object: two entries of one kind would both be accepted, and
// which of them the cache used would change from run to run (it did: the Secrets'
// values-dropping transform was one of two entries of Secret).
func cacheOptions(kinds []client.Object, namespaces []string, noNodes bool) (cache.Options, error) {
	member, err := labels.NewRequirement(inventory.PartOfLabel, selection.Exists, nil)
	if err != nil {
		return cache.Options{}, err
	}
	byObject := map[client.Object]cache.ByObject{}
	for _, obj := range kinds {
		byObject[obj] = cache.ByObject{Label: labels.NewSelector().Add(*member), Transform: cacheTransform(obj)}
	}
	reactionsCache(byObject, noNodes)
	cacheOpts := cache.Options{ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()}
	if len(namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return cacheOpts, nil
}

// NewManager builds the manager and registers the reconciler with it; Start runs it.
func NewManager(cfg *rest.Config, clients *kube.Clients, opts Options) (ctrl.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	optional := servedOptionalKinds(clients, opts.Log)
	noNodes := !mayWatchNodes(clients, opts.Log)
	cacheOpts, err := cacheOptions(append(ownedKinds(), optional...), opts.Namespaces, noNodes)
	if err != nil {
		return nil, err
	}
	metricsAddr := opts.MetricsBindAddress
	if metricsAddr == "" {
		metricsAddr = "0"
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	if opts.HealthProbeBindAddress != "" && opts.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, err
		}
		// Ready once the caches synced: before that a reconcile would see nothing.
		if err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
			if !mgr.GetCache().WaitForCacheSync(req.Context()) {
				return fmt.Errorf("caches not synced")
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clients: clients, Catalog: opts.Catalog, Recorder: mgr.GetEventRecorder(Name),
		Audit: opts.Audit, Drift: opts.Drift, Holder: opts.Holder, LockTTL: opts.LockTTL, Log: opts.Log, HealthyRequeue: opts.HealthyRequeue,
		Metrics: NewMetrics(metrics.Registry), optionalKinds: optional, Upgrade: opts.Upgrade}
	if r.Live, err = newCacheSource(mgr.GetCache(), scheme, plan.APISource{Clients: clients}); err != nil {
		return nil, err
	}
	r.Reactions = NewReactions(DefaultNodeGrace, DefaultEvictedPodTTL)
	r.Reactions.NoNodes = noNodes
	switch {
	case opts.NodeGrace < 0:
		return nil, fmt.Errorf("node grace %s: must not be negative", opts.NodeGrace)
	case opts.NodeGrace > 0:
		r.Reactions.NodeGrace = opts.NodeGrace
	}
	switch {
	case opts.EvictedPodTTL < 0:
		r.Reactions.EvictedPodTTL = 0
	case opts.EvictedPodTTL > 0:
		r.Reactions.EvictedPodTTL = opts.EvictedPodTTL
	}
	if err := r.SetupWithManager(mgr, opts.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	return mgr, nil
}

// SetupWithManager watches OntoPlatforms (spec changes and deletions; the status this
// reconciler writes does not bring it back) and the platforms' objects.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, maxConcurrent int) error {
	if maxConcurrent <= 0 {
		maxConcurrent = 4
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&v1alpha1.OntoPlatform{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletion()))).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: maxConcurrent,
			// One watch per process in use; tests start several managers.
			SkipNameValidation: ptr.To(true),
			RateLimiter:        workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](errorBackoffBase, errorBackoffMax),
		})
	toPlatform := handler.EnqueueRequestsFromMapFunc(r.platformsOf)
	for _, obj := range append(ownedKinds(), r.optionalKinds...) {
		b = b.Watches(obj, toPlatform, builder.WithPredicates(changed()))
	}
	b, err := r.watchPodsAndNodes(mgr, b)
	if err != nil {
		return err
	}
	return b.Complete(r)
}

// deletion passes updates that start an OntoPlatform's deletion.
func deletion() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}

// changed passes the events of a platform's object that may need a pass: created or
// deleted, its spec changed (generation), its labels or annotations changed, or a
// workload's readiness changed (the next plane may go on). A status update alone of a
// workload that stays as ready as it was does not.
func changed() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o.GetGeneration() != n.GetGeneration() || !labels.Equals(o.GetLabels(), n.GetLabels()) || !equalMaps(o.GetAnnotations(), n.GetAnnotations()) {
			return true
		}
		switch n.(type) {
		case *appsv1.Deployment, *appsv1.StatefulSet:
			return readyOf(o) != readyOf(n)
		case *corev1.Service, *corev1.ConfigMap, *corev1.ServiceAccount:
			// No generation: any change but the resourceVersion is someone's edit.
			return true
		}
		return false
	}}
}

func equalMaps(a, b map[string]string) bool { return labels.Equals(a, b) }

// readyOf is a workload's readiness by the rules apply waits with.
func readyOf(obj client.Object) bool {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false
	}
	u := &unstructured.Unstructured{Object: m}
	// Typed objects from the cache carry no kind, which kstatus reads.
	switch obj.(type) {
	case *appsv1.Deployment:
		u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(health.KindDeployment))
	case *appsv1.StatefulSet:
		u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(health.KindStatefulSet))
	}
	return health.Check(u).Ready
}

// platformsOf maps a platform's object to the OntoPlatform whose inventory it is in.
// One namespace holds one platform, so the OntoPlatforms of the object's namespace
// are few; the inventory ID picks the one.
func (r *Reconciler) platformsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	id := obj.GetLabels()[inventory.PartOfLabel]
	if id == "" {
		return nil
	}
	var list v1alpha1.OntoPlatformList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	for _, p := range list.Items {
		if inventory.ID(p.Namespace, p.Name) == id {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(&p)}}
		}
	}
	return nil
}

// RemoveReleasedLease deletes the leader election Lease in namespace once it is
// released (no holder: this process let it go as it stopped), on the resourceVersion
// it read, so a replica that took it meanwhile keeps it. Failures are only logged: the
// Lease is harmless, and the next watch reuses it.
func RemoveReleasedLease(ctx context.Context, kube kubernetes.Interface, namespace string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	leases := kube.CoordinationV1().Leases(namespace)
	l, err := leases.Get(ctx, LeaderElectionID, metav1.GetOptions{})
	if err != nil {
		return
	}
	if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		return // another replica leads
	}
	pre := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}}
	if err := leases.Delete(ctx, LeaderElectionID, pre); err != nil && log != nil {
		log.Debug("remove the released leader election Lease", "namespace", namespace, "err", err)
	}
}
