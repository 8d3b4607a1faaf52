/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// DefaultConcurrency bounds the requests in flight while gathering.
const DefaultConcurrency = 8

// GatherError is a failed gather: the API server could not be reached, or refused a
// read doctor needs. No check runs after it (see Fatal).
type GatherError struct {
	// What was being read.
	What string
	Err  error
}

func (e *GatherError) Error() string { return fmt.Sprintf("read %s: %v", e.What, e.Err) }
func (e *GatherError) Unwrap() error { return e.Err }

// Gatherer reads an Env from one cluster. It writes nothing: the only requests that are
// not reads are server-side dry-runs (drift, admission) and access reviews.
type Gatherer struct {
	Clients *kube.Clients
	Settings
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Concurrency of requests; DefaultConcurrency when 0.
	Concurrency int
	// Pre gathers for `doctor --pre`: what a first install needs, from File, with no
	// installed platform required.
	Pre bool
	// File is the platform loaded from -f, nil when not given. It names the platform
	// when Name is empty, and is the desired state when the platform has no revision
	// snapshot (or with Pre).
	File *platform.Loaded
	// FileSource names File in findings ("platform.yaml").
	FileSource string
	// Checks are the codes of the checks that will run, nil for all: the costly reads
	// only one check needs (the drift plan's dry-runs, access reviews, each node's
	// pods, admission dry-runs) are skipped when it does not run.
	Checks map[string]bool
}

// runs reports whether the check code will run.
func (g *Gatherer) runs(code string) bool { return g.Checks == nil || g.Checks[code] }

func (g *Gatherer) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Gather reads the Env of the platform name in namespace ("" name: the only one of the
// namespace, or File's). A *GatherError means nothing can be checked; an
// *inventory.NotFoundError or *inventory.AmbiguousError that there is no single
// platform to diagnose.
func (g *Gatherer) Gather(ctx context.Context, namespace, name string) (*Env, error) {
	env := &Env{Settings: g.Settings, Now: g.now(), Pre: g.Pre, Namespace: namespace, ClientMinor: clientMinor()}
	if g.File != nil {
		if name == "" {
			name = g.File.Platform.Name
		}
		env.Namespace = g.File.Platform.Namespace
	}
	v, err := g.Clients.Kube.Discovery().ServerVersion()
	if err != nil {
		return nil, &GatherError{What: "the API server's version", Err: err}
	}
	env.Server = v

	if !g.Pre {
		if err := g.readPlatform(ctx, env, name); err != nil {
			return nil, err
		}
	}
	if err := g.readDesired(ctx, env); err != nil {
		return nil, err
	}

	// Whether the namespace exists decides what else is read.
	if n, err := g.Clients.Kube.CoreV1().Namespaces().Get(ctx, env.Namespace, metav1.GetOptions{}); err == nil {
		env.NamespaceExists, env.NamespaceLabels = true, n.Labels
	} else if !apierrors.IsNotFound(err) {
		return nil, &GatherError{What: "namespace " + env.Namespace, Err: err}
	}

	// egctx ends when the reads do: what comes after them uses ctx.
	eg, egctx := errgroup.WithContext(ctx)
	eg.SetLimit(g.concurrency())
	read := func(what string, f func(context.Context) error) {
		eg.Go(func() error {
			if err := f(egctx); err != nil {
				return &GatherError{What: what, Err: err}
			}
			return nil
		})
	}
	ns := env.Namespace
	read("storage classes", func(ctx context.Context) error {
		list, err := g.Clients.Kube.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
		if err == nil {
			env.StorageClasses = list.Items
		}
		return err
	})
	read("ingress classes", func(ctx context.Context) error {
		list, err := g.Clients.Kube.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
		if err == nil {
			env.IngressClasses = list.Items
		}
		return err
	})
	read("resource quotas", func(ctx context.Context) error {
		list, err := g.Clients.Kube.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			env.Quotas = list.Items
		}
		return err
	})
	read("the OntoPlatform CRD", func(ctx context.Context) error {
		crd, err := g.readCRD(ctx)
		env.CRD = crd
		return err
	})
	read("nodes", func(ctx context.Context) error { return g.readNodes(ctx, env) })
	if env.Desired != nil {
		if env.Served, err = g.served(env); err != nil {
			return nil, err
		}
		if g.runs(codeRBAC) {
			read("permissions", func(ctx context.Context) error {
				access, err := g.access(ctx, env)
				env.Access = access
				return err
			})
		}
		// An installed platform's drift plan already dry-runs every object through
		// admission; a second dry-run of its workloads would tell nothing new.
		if env.NamespaceExists && g.runs(codeAdmission) && (env.Platform == nil || !g.runs(CodeDrift)) {
			read("admission dry-runs", func(ctx context.Context) error {
				errs, err := g.dryRunWorkloads(ctx, env)
				env.DryRunErrors = errs
				return err
			})
		}
	}
	if env.Platform != nil {
		g.readInstalled(read, env)
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if env.Platform != nil {
		if err := g.readAfterPods(ctx, env); err != nil {
			return nil, err
		}
	}
	return env, nil
}

func (g *Gatherer) concurrency() int {
	if g.Concurrency > 0 {
		return g.Concurrency
	}
	return DefaultConcurrency
}

// readPlatform finds the installed platform and its live component report.
func (g *Gatherer) readPlatform(ctx context.Context, env *Env, name string) error {
	obs := &status.Observer{Clients: g.Clients, Now: func() time.Time { return env.Now }}
	report, err := obs.Observe(ctx, env.Namespace, name)
	var notFound *inventory.NotFoundError
	if errors.As(err, &notFound) && g.File != nil {
		// Not installed: a diagnosis of its health would find nothing to check and
		// pass. Say so; --pre is the check of a platform before its install.
		return fmt.Errorf("%w; doctor --pre -f FILE checks a platform before its first install", err)
	}
	var ambiguous *inventory.AmbiguousError
	if errors.As(err, &notFound) || errors.As(err, &ambiguous) {
		return err
	}
	if err != nil {
		return &GatherError{What: "the OntoPlatform", Err: err}
	}
	l := &inventory.Lister{Dynamic: g.Clients.Dynamic, Mapper: g.Clients.Mapper}
	parent, err := l.Parent(ctx, report.Namespace, report.Name)
	if err != nil {
		return &GatherError{What: "the OntoPlatform", Err: err}
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(parent.Object, &p); err != nil {
		return fmt.Errorf("decode OntoPlatform %s/%s: %w", parent.GetNamespace(), parent.GetName(), err)
	}
	env.Platform, env.Status, env.Namespace = &p, report, p.Namespace
	return nil
}

// readDesired is what the platform renders: its latest revision snapshot (what the
// last successful run applied, patches and release included), else the file.
func (g *Gatherer) readDesired(ctx context.Context, env *Env) error {
	if p := env.Platform; p != nil && !g.Pre {
		if n := apply.LatestSnapshot(p.Status.History, 0); n > 0 {
			a := apply.NewApplier(g.Clients, nil)
			snap, err := a.LoadRevision(ctx, p.Namespace, p.Name, n)
			if err == nil {
				from := snap.Platform(p.Name, p.Namespace)
				d, err := platform.Loaded{Platform: from, Release: snap.Release}.Desired()
				if err != nil {
					return fmt.Errorf("render revision %d of %s/%s: %w", n, p.Namespace, p.Name, err)
				}
				env.Desired, env.DesiredSource = d, fmt.Sprintf("revision %d", n)
				return nil
			}
			var status apierrors.APIStatus
			if errors.As(err, &status) && !apierrors.IsNotFound(err) {
				return &GatherError{What: fmt.Sprintf("the snapshot of revision %d", n), Err: err}
			}
			// A snapshot pruned, or edited (its digest no longer matches): fall back
			// to the file, if any; PLT-104 says which it compared with.
		}
	}
	if g.File != nil {
		d, err := g.File.Desired()
		if err != nil {
			return err
		}
		env.Desired, env.DesiredSource = d, g.FileSource
	}
	return nil
}

func (g *Gatherer) readCRD(ctx context.Context) (*unstructured.Unstructured, error) {
	crd, err := g.Clients.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		Get(ctx, v1alpha1.CRDName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(crd.Object, "metadata", "managedFields")
	// The schema is most of the object and no check reads it.
	if versions, ok, _ := unstructured.NestedSlice(crd.Object, "spec", "versions"); ok {
		for i := range versions {
			if m, ok := versions[i].(map[string]any); ok {
				delete(m, "schema")
			}
		}
		_ = unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
	}
	return crd, nil
}

// served says, for each kind the desired objects use, whether the cluster serves it.
// A discovery error other than "no such kind" is a failed read, not an answer.
func (g *Gatherer) served(env *Env) (map[schema.GroupVersionKind]bool, error) {
	out := map[schema.GroupVersionKind]bool{}
	for _, obj := range env.Rendered() {
		gvk := obj.GroupVersionKind()
		if _, done := out[gvk]; done {
			continue
		}
		_, err := g.Clients.Mapping(obj)
		if err != nil && !meta.IsNoMatchError(err) {
			return nil, &GatherError{What: "API discovery of " + gvk.String(), Err: err}
		}
		out[gvk] = err == nil
	}
	return out, nil
}

// readInstalled queues the reads of an installed platform: its workloads, pods, HPAs,
// PDBs, lease, service accounts, ingresses, and the drift plan.
func (g *Gatherer) readInstalled(read func(string, func(context.Context) error), env *Env) {
	p := env.Platform
	ns := p.Namespace
	kc := g.Clients.Kube
	read("pods", func(ctx context.Context) error {
		list, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: PodSelector(p.Name)})
		if err != nil {
			return err
		}
		for i := range list.Items {
			list.Items[i].ManagedFields = nil
		}
		env.Pods = list.Items
		return nil
	})
	read("horizontal pod autoscalers", func(ctx context.Context) error {
		list, err := kc.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelInstance + "=" + p.Name})
		if err == nil {
			env.HPAs = list.Items
		}
		return err
	})
	read("pod disruption budgets", func(ctx context.Context) error {
		list, err := kc.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelInstance + "=" + p.Name})
		if err == nil {
			env.PDBs = list.Items
		}
		return err
	})
	read("ingresses", func(ctx context.Context) error {
		list, err := kc.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelInstance + "=" + p.Name})
		if err == nil {
			env.Ingresses = list.Items
		}
		return err
	})
	read("service accounts", func(ctx context.Context) error {
		list, err := kc.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		env.ServiceAccounts = map[string]*corev1.ServiceAccount{}
		for i := range list.Items {
			env.ServiceAccounts[list.Items[i].Name] = &list.Items[i]
		}
		return nil
	})
	read("the lock lease", func(ctx context.Context) error {
		lease, err := kc.CoordinationV1().Leases(ns).Get(ctx, apply.LockName(p.Name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			lease.ManagedFields = nil
			env.Lease = lease
		}
		return err
	})
	if env.Desired != nil && (g.runs(CodeDrift) || g.runs(CodeExternalSecrets)) {
		read("the drift plan", func(ctx context.Context) error {
			planner := &plan.Planner{Clients: g.Clients}
			pl, err := planner.Plan(ctx, env.Desired)
			if err != nil {
				if isRBACDenied(err) || isUnreachable(err) {
					return err
				}
				// A plan refused for a reason of the cluster's state (a kind not
				// served, another platform's object) is a finding, not a stop.
				env.PlanError = err.Error()
				return nil
			}
			env.Plan = pl
			return nil
		})
	}
}

func isUnreachable(err error) bool {
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// PodSelector selects the pods of platform name.
func PodSelector(name string) string {
	return v1alpha1.LabelInstance + "=" + name + "," + v1alpha1.LabelManagedBy + "=kubectl-onto"
}

// readAfterPods reads what depends on the pods and ingresses: the events of pods with
// a problem (one list per pod, field-selected, never the namespace's whole event
// stream) and the TLS Secrets the ingresses name.
func (g *Gatherer) readAfterPods(ctx context.Context, env *Env) error {
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(g.concurrency())
	var mu sync.Mutex
	env.Events = map[string][]corev1.Event{}
	for i := range env.Pods {
		pod := &env.Pods[i]
		if len(health.PodProblems(pod)) == 0 {
			continue
		}
		eg.Go(func() error {
			list, err := g.Clients.Kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
				FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod.Name,
			})
			if err != nil {
				return &GatherError{What: "events of pod " + pod.Name, Err: err}
			}
			events := list.Items
			sort.SliceStable(events, func(a, b int) bool { return eventTime(&events[a]).Before(eventTime(&events[b])) })
			for j := range events {
				events[j].ManagedFields = nil
			}
			mu.Lock()
			env.Events[pod.Name] = events
			mu.Unlock()
			return nil
		})
	}
	for _, ing := range env.Ingresses {
		for _, t := range ing.Spec.TLS {
			if t.SecretName == "" {
				continue
			}
			eg.Go(func() error {
				c, err := g.certificate(ctx, ing, t)
				if err != nil {
					return &GatherError{What: "TLS Secret " + t.SecretName, Err: err}
				}
				mu.Lock()
				env.Certificates = append(env.Certificates, c)
				mu.Unlock()
				return nil
			})
		}
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	sort.Slice(env.Certificates, func(i, j int) bool { return env.Certificates[i].Secret < env.Certificates[j].Secret })
	return nil
}

// eventTime is when an event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// certificate reads one TLS Secret and keeps its names and validity; its bytes go out
// of scope here.
func (g *Gatherer) certificate(ctx context.Context, ing networkingv1.Ingress, t networkingv1.IngressTLS) (Certificate, error) {
	c := Certificate{Secret: t.SecretName, Hosts: t.Hosts, Ingress: ing.Name}
	s, err := g.Clients.Kube.CoreV1().Secrets(ing.Namespace).Get(ctx, t.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.Missing = true
		return c, nil
	}
	if err != nil {
		return c, err
	}
	block, _ := pem.Decode(s.Data[corev1.TLSCertKey])
	if block == nil {
		c.Error = "no PEM certificate under " + corev1.TLSCertKey
		return c, nil
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		c.Error = "cannot parse the certificate: " + err.Error()
		return c, nil
	}
	c.DNSNames, c.NotBefore, c.NotAfter = cert.DNSNames, cert.NotBefore, cert.NotAfter
	return c, nil
}

// readNodes reads the nodes and sums, per schedulable node, the requests of the running
// pods that are not the platform's: what the capacity check must leave to others. One
// pod list per node, field-selected as `kubectl describe node` does, never the
// cluster's every pod at once; only the sums are kept.
func (g *Gatherer) readNodes(ctx context.Context, env *Env) error {
	nodes, err := g.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range nodes.Items {
		// Every image cached on the node: often most of a node's size, and no check
		// needs it.
		nodes.Items[i].Status.Images = nil
		nodes.Items[i].ManagedFields = nil
	}
	env.Nodes = nodes.Items
	if !g.runs(codeCapacity) {
		return nil
	}
	name := ""
	if env.Platform != nil {
		name = env.Platform.Name
	} else if env.Desired != nil {
		name = env.Desired.Platform.GetName()
	}
	out := map[string]corev1.ResourceList{}
	var mu sync.Mutex
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(g.concurrency())
	for _, node := range nodes.Items {
		if node.Spec.Unschedulable {
			continue
		}
		eg.Go(func() error {
			list, err := g.Clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{
				FieldSelector: "spec.nodeName=" + node.Name + ",status.phase!=Succeeded,status.phase!=Failed",
			})
			if err != nil {
				return err
			}
			sum := corev1.ResourceList{}
			for i := range list.Items {
				pod := &list.Items[i]
				if pod.Namespace == env.Namespace && pod.Labels[v1alpha1.LabelInstance] == name && pod.Labels[v1alpha1.LabelManagedBy] == "kubectl-onto" {
					continue
				}
				addResources(sum, podRequests(&pod.Spec))
			}
			mu.Lock()
			out[node.Name] = sum
			mu.Unlock()
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	env.NodeRequests = out
	return nil
}

func addResources(sum, add corev1.ResourceList) {
	for res, q := range add {
		cur := sum[res]
		cur.Add(q)
		sum[res] = cur
	}
}

// podRequests is what the scheduler counts for a pod: the sum of its containers'
// requests, at least the largest init container's, plus its overhead.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range spec.Containers {
		addResources(out, c.Resources.Requests)
	}
	for _, c := range spec.InitContainers {
		for res, q := range c.Resources.Requests {
			if cur := out[res]; q.Cmp(cur) > 0 {
				out[res] = q.DeepCopy()
			}
		}
	}
	addResources(out, spec.Overhead)
	return out
}

// dryRunWorkloads creates, as a server-side dry-run in the existing namespace, one Pod
// from each rendered workload's pod template: PodSecurity enforces on Pods only (on a
// Deployment it merely warns), and quota and webhooks answer for a Pod as they would
// for the workload's real ones.
func (g *Gatherer) dryRunWorkloads(ctx context.Context, env *Env) (map[string]string, error) {
	out := map[string]string{}
	var mu sync.Mutex
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(g.concurrency())
	for _, obj := range env.Rendered() {
		if !health.IsWorkload(obj) {
			continue
		}
		eg.Go(func() error {
			pod, err := podOf(obj)
			if err != nil {
				return fmt.Errorf("pod template of %s/%s: %w", obj.GetKind(), obj.GetName(), err)
			}
			_, err = g.Clients.Kube.CoreV1().Pods(obj.GetNamespace()).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil {
				return nil
			}
			if isRBACDenied(err) || isUnreachable(err) {
				return err
			}
			mu.Lock()
			out[strings.ToLower(obj.GetKind())+"/"+obj.GetName()] = apiMessage(err)
			mu.Unlock()
			return nil
		})
	}
	return out, eg.Wait()
}

// podOf is a Pod made from a workload's pod template, named after the workload.
func podOf(workload *unstructured.Unstructured) (*corev1.Pod, error) {
	tmpl, found, err := unstructured.NestedMap(workload.Object, "spec", "template")
	if err != nil || !found {
		return nil, fmt.Errorf("no spec.template: %v", err)
	}
	var pt corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pt); err != nil {
		return nil, err
	}
	pod := &corev1.Pod{ObjectMeta: pt.ObjectMeta, Spec: pt.Spec}
	pod.Name, pod.Namespace = workload.GetName()+"-doctor-dry-run", workload.GetNamespace()
	// Its own ServiceAccount is created with the platform; the ServiceAccount
	// admission plugin would refuse a Pod naming it before then. The namespace's
	// default one stands in: PodSecurity and quota do not look at it.
	pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount = "", ""
	// A StatefulSet's pods get a volume per claim template, as its controller adds.
	claims, _, _ := unstructured.NestedSlice(workload.Object, "spec", "volumeClaimTemplates")
	for _, c := range claims {
		m, _ := c.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "metadata", "name")
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name + "-" + workload.GetName() + "-0"}}})
	}
	return pod, nil
}

// isRBACDenied reports whether err is the authorizer's refusal ("User ... cannot
// create resource ..."), which means doctor cannot read or check what it needs, as
// opposed to a 403 of admission (PodSecurity, quota, a webhook), which is a finding.
func isRBACDenied(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(apiMessage(err), " cannot ")
}

func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// clientMinor is the minor version of the Kubernetes client libraries built in
// (client-go v0.37.x → 37), 0 when unknown.
func clientMinor() int {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return 0
	}
	for _, d := range bi.Deps {
		if d.Path != "k8s.io/client-go" {
			continue
		}
		if v, err := utilversion.ParseGeneric(d.Version); err == nil {
			return int(v.Minor())
		}
	}
	return 0
}
