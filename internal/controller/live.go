/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/certs"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// cacheSource is the planner's live source in the watch: the kinds the watch caches
// are read from its informers, the others (the namespace, the CRD, kinds of optional
// APIs) from the API server. The cache says which objects exist and which
// resourceVersions moved; the planner reads from the API server the objects it
// dry-runs and those the cache does not hold (it keeps only the platforms' members),
// so a cache that lags costs at most another pass, never a wrong write.
type cacheSource struct {
	reader client.Reader
	scheme *runtime.Scheme
	api    plan.LiveSource
	cached map[schema.GroupVersionKind]bool
}

func newCacheSource(reader client.Reader, scheme *runtime.Scheme, api plan.LiveSource) (*cacheSource, error) {
	s := &cacheSource{reader: reader, scheme: scheme, api: api, cached: map[schema.GroupVersionKind]bool{}}
	for _, obj := range append(ownedKinds(), &v1alpha1.OntoPlatform{}) {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return nil, err
		}
		s.cached[gvk] = true
	}
	return s, nil
}

func (s *cacheSource) Get(ctx context.Context, mapping *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error) {
	gvk := mapping.GroupVersionKind
	if !s.cached[gvk] {
		return s.api.Get(ctx, mapping, namespace, name)
	}
	obj, err := s.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	co, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s: not an object kind", gvk)
	}
	if err := s.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, co); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return cachedUnstructured(co, gvk)
}

func (s *cacheSource) List(ctx context.Context, mapping *meta.RESTMapping, namespace, selector string) ([]*unstructured.Unstructured, error) {
	gvk := mapping.GroupVersionKind
	if !s.cached[gvk] {
		return s.api.List(ctx, mapping, namespace, selector)
	}
	obj, err := s.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	list, ok := obj.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%s: not a list kind", gvk)
	}
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if err := s.reader.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		u, err := cachedUnstructured(item, gvk)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func cachedUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// Typed objects from the cache carry no kind.
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// secretKeysOnly is the cache's transform of Secrets: their keys stay (a plan checks
// that a generated Secret holds every key), their values do not, so the watch never
// holds a credential in memory. The certificates of a certificate Secret stay: they
// are public, and a plan reads them to see whether one must be re-issued.
func secretKeysOnly(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	_, certificate := s.Annotations[v1alpha1.AnnotationCertificate]
	for k := range s.Data {
		if certificate && (k == certs.KeyCert || k == certs.KeyCA) {
			continue
		}
		s.Data[k] = nil
	}
	s.StringData = nil
	s.ManagedFields = nil
	return s, nil
}

// cacheTransform is what the cache keeps of obj's kind; nil keeps all but the managed
// fields (the cache's default transform). A pass reads of a cached object its
// metadata (existence, resourceVersion, labels), the status of workloads and quotas,
// and the keys of Secrets; every object it dry-runs it reads from the API server
// whole. So the rest goes, for the kinds that have much of it.
func cacheTransform(obj client.Object) toolscache.TransformFunc {
	switch obj.(type) {
	case *corev1.Secret:
		return secretKeysOnly
	case *appsv1.Deployment, *appsv1.StatefulSet:
		return slimWorkload
	case *corev1.ConfigMap:
		return withoutConfigMapData
	case *networkingv1.NetworkPolicy:
		return withoutNetworkPolicySpec
	}
	return nil
}

// withoutConfigMapData drops a ConfigMap's data: configuration files, the largest
// part of a tenant's ConfigMaps, which no pass reads from the cache.
func withoutConfigMapData(obj any) (any, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		cm.ManagedFields, cm.Data, cm.BinaryData = nil, nil, nil
	}
	return obj, nil
}

// withoutNetworkPolicySpec drops a NetworkPolicy's rules, which no pass reads from the
// cache.
func withoutNetworkPolicySpec(obj any) (any, error) {
	if np, ok := obj.(*networkingv1.NetworkPolicy); ok {
		np.ManagedFields, np.Spec = nil, networkingv1.NetworkPolicySpec{}
	}
	return obj, nil
}

// slimWorkload is the cache's transform of Deployments and StatefulSets: what a pass
// reads of a cached workload is its metadata, replicas and status (readiness, the
// count an autoscaler set); an object it dry-runs is read from the API server whole.
// Of the pod template only the containers' names and images stay: the rest was a
// third of a watch's cache at 100 tenants.
func slimWorkload(obj any) (any, error) {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		w.ManagedFields = nil
		slimTemplate(&w.Spec.Template)
	case *appsv1.StatefulSet:
		w.ManagedFields = nil
		slimTemplate(&w.Spec.Template)
	}
	return obj, nil
}

func slimTemplate(t *corev1.PodTemplateSpec) {
	t.Spec = corev1.PodSpec{Containers: slimContainers(t.Spec.Containers, false), InitContainers: slimContainers(t.Spec.InitContainers, false)}
}

var _ toolscache.TransformFunc = slimWorkload
