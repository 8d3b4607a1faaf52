/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package kube builds the Kubernetes clients every cluster-facing package shares, and
// maps objects to their REST resources.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Client-side rate limits of every client New builds, unless the config sets its
// own; exported so benchmarks give a peer tool the same. client-go's defaults (5 QPS, burst 10) would serialise a
// plan's concurrent dry-runs; the API server's own priority and fairness protects it.
// The burst holds one run's requests: an uninstall of the production example sends
// fewer than 200, and a lower burst serialised its last stages (figures in
// docs/benchmarks.md). kapp allows 1000 of each.
const (
	DefaultQPS   = 50
	DefaultBurst = 300
)

// ShareRateLimits returns a copy of cfg with n times the rate limits New gives (or
// cfg's own, when set): for clients n platforms use at once, each as if it ran alone.
// One run's limits are sized for one platform's concurrent dry-runs; shared by a
// fleet, they made a plan of many unchanged tenants wait on its own rate limiter
// (docs/benchmarks.md).
func ShareRateLimits(cfg *rest.Config, n int) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if n < 1 {
		n = 1
	}
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst == 0 {
		burst = DefaultBurst
	}
	cfg.QPS, cfg.Burst = qps*float32(n), burst*n
	return cfg
}

var errNoNamespace = errors.New("namespaced object without a namespace")

// Clients are the clients of one cluster.
type Clients struct {
	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Metadata reads objects' metadata alone, in protobuf: for watches that need no
	// more, such as the pods an uninstall waits for.
	Metadata metadata.Interface
	// Mapper maps kinds to resources; it re-reads discovery when a kind is unknown, so
	// CRDs installed during a run (OntoPlatform itself) are found.
	Mapper meta.ResettableRESTMapper

	// rest is the REST client under Dynamic, for requests whose answer the dynamic
	// client drops (Delete).
	rest rest.Interface
}

// New builds Clients from a REST config. The config is copied, never changed.
func New(cfg *rest.Config) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	// The dynamic client's own construction, kept open so Delete can read answers.
	dcfg := dynamic.ConfigFor(cfg)
	dcfg.GroupVersion, dcfg.APIPath = nil, ""
	rc, err := rest.UnversionedRESTClientFor(dcfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	dc := dynamic.New(rc)
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	return &Clients{Config: cfg, Kube: kc, Dynamic: dc, Metadata: mc, Mapper: mapper, rest: rc}, nil
}

// Mapping returns the REST mapping of obj's kind. When the kind is unknown it forgets
// cached discovery and asks once more, because a CRD may have just been installed.
func (c *Clients) Mapping(obj *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Resource returns the dynamic client for obj: namespaced or cluster-scoped as its
// kind is.
func (c *Clients) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	m, err := c.Mapping(obj)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			return nil, errNoNamespace
		}
		return c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return c.Dynamic.Resource(m.Resource), nil
}

// Delete deletes obj as opts say, as the dynamic client would, and reports whether
// the API server's answer says the object is gone. A delete that removes the object at
// once answers with a Status of Success, or, for resources that return the deleted
// object (Services, ServiceAccounts, pods), with the object as it was, without a
// deletionTimestamp. One that leaves it terminating, held by a finalizer or a pod's
// grace period, answers with the object marked by one.
func (c *Clients) Delete(ctx context.Context, obj *unstructured.Unstructured, opts metav1.DeleteOptions) (gone bool, err error) {
	m, err := c.Mapping(obj)
	if err != nil {
		return false, err
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced && obj.GetNamespace() == "" {
		return false, errNoNamespace
	}
	gvr := m.Resource
	prefix := []string{"/api", gvr.Version}
	if gvr.Group != "" {
		prefix = []string{"/apis", gvr.Group, gvr.Version}
	}
	raw, err := c.rest.Delete().AbsPath(prefix...).NamespaceIfScoped(obj.GetNamespace(), namespaced).
		Resource(gvr.Resource).Name(obj.GetName()).Body(&opts).Do(ctx).Raw()
	if err != nil {
		return false, err
	}
	var answer struct {
		Kind string `json:"kind"`
		// Status is a Status's string, and an object's own status.
		Status   json.RawMessage `json:"status"`
		Metadata struct {
			DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &answer) != nil || answer.Kind == "" {
		return false, nil
	}
	if answer.Kind == "Status" {
		var status string
		return json.Unmarshal(answer.Status, &status) == nil && status == metav1.StatusSuccess, nil
	}
	return answer.Metadata.DeletionTimestamp == nil, nil
}

// Ref is "Kind namespace/name" (or "Kind name" when cluster-scoped), the way errors and
// progress name an object.
func Ref(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// GVR returns the resource of obj's kind, for watches and lists.
func (c *Clients) GVR(obj *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	m, err := c.Mapping(obj)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("map %s: %w", Ref(obj), err)
	}
	return m.Resource, nil
}
