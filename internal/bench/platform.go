/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package bench measures plan and apply of the production example against a live
// cluster, side by side with kubectl: wall time, API requests by class, and how long a
// full install waits beyond the slowest rollout of each plane. The Go benchmarks of
// pkg/apply and the `make bench` command (hack/bench) share it, so both measure the
// same thing the same way.
//
// Every measured run builds its clients afresh, as one invocation of the CLI does:
// discovery is part of the figure, rendering is not (BenchmarkRender has it).
package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// NamespaceLabel marks the namespaces this package creates, so leftovers of an
// interrupted run are easy to find: kubectl get ns -l onto.dev/bench.
const NamespaceLabel = "onto.dev/bench"

// Cluster is the cluster the figures are measured against.
type Cluster struct {
	// Kubeconfig is the path kubectl is given.
	Kubeconfig string
	// Config is the REST config as the CLI builds it from the kubeconfig: client-go's
	// defaults, so kube.New applies the CLI's rate limits. Copy it before changing it.
	Config *rest.Config
	Kube   kubernetes.Interface
}

// Connect loads kubeconfig.
func Connect(kubeconfig string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Kubeconfig: kubeconfig, Config: cfg, Kube: kc}, nil
}

// Desired loads the platform file at path (the production example), moves it to
// namespace and renders it, as `kubectl onto plan -f` does.
func Desired(path, namespace string) (*plan.Desired, error) {
	catalog, err := release.Default()
	if err != nil {
		return nil, err
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		return nil, err
	}
	ps, err := v.LoadFile(path, nil)
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		return nil, fmt.Errorf("%s holds %d platforms, want 1", path, len(ps))
	}
	p := ps[0]
	p.Namespace = namespace
	rel, err := catalog.Get(p.Spec.Version)
	if err != nil {
		return nil, err
	}
	planes, err := render.Render(p, render.Options{Release: rel})
	if err != nil {
		return nil, err
	}
	return plan.NewDesired(p, planes)
}

// Manifest is every object apply writes for ds (the CRD once, then for each platform
// its planes' objects, with their inventory labels, and the OntoPlatform parent last:
// the namespace comes first, so kubectl can install it from nothing), as one
// multi-document YAML file for kubectl.
func Manifest(ds ...*plan.Desired) ([]byte, error) {
	if len(ds) == 0 {
		return nil, fmt.Errorf("manifest of no platform")
	}
	var buf bytes.Buffer
	objs := []*unstructured.Unstructured{ds[0].CRD}
	for _, d := range ds {
		objs = append(append(objs, d.Objects()...), d.Platform)
	}
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("marshal %s: %w", kube.Ref(o), err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// WriteManifest writes Manifest(ds...) to path.
func WriteManifest(path string, ds ...*plan.Desired) error {
	data, err := Manifest(ds...)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// NamespaceName returns a fresh namespace name starting with prefix.
func NamespaceName(prefix string) string {
	return prefix + "-" + strings.ToLower(rand.Text()[:6])
}

// EnsureCRD creates the CRD in the file at path unless the cluster serves it already
// (the production example renders a ServiceMonitor; the test cluster's stand-in CRD
// is hack/testcluster/manifests/servicemonitor-crd.yaml). An existing CRD is left
// alone.
func (c *Cluster) EnsureCRD(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	clients, err := kube.New(c.Config)
	if err != nil {
		return err
	}
	ri, err := clients.Resource(obj)
	if err != nil {
		return err
	}
	if _, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "onto-bench"}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD %s: %w", obj.GetName(), err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
		for _, cond := range conds {
			if m, _ := cond.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// DeleteNamespace deletes namespace and waits until it is gone, so its pods give their
// node resources back (the test cluster's GPU node fits two production platforms, one
// of which may be someone else's) before the next install starts.
func (c *Cluster) DeleteNamespace(ctx context.Context, name string, timeout time.Duration) error {
	return c.DeleteNamespaces(ctx, []string{name}, timeout)
}

// DeleteNamespaces deletes every namespace of names at once, then waits until they are
// all gone: a fleet's namespaces are emptied by the namespace controller in parallel.
func (c *Cluster) DeleteNamespaces(ctx context.Context, names []string, timeout time.Duration) error {
	for _, name := range names {
		err := c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete namespace %s: %w", name, err)
		}
	}
	left := slices.Clone(names)
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for len(left) > 0 {
			_, err := c.Kube.CoreV1().Namespaces().Get(ctx, left[0], metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			if err == nil {
				return false, nil
			}
			left = left[1:]
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for namespace %s to go (%d of %d left): %w", left[0], len(left), len(names), err)
	}
	return nil
}

// CreateNamespace creates namespace name, labelled as the bench's own.
func (c *Cluster) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{NamespaceLabel: "true"}}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}
