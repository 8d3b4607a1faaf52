/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package status reports the state of an installed OntoPlatform: the phase, conditions,
// upgrade and history it recorded, and each component's readiness read from the live
// workloads, compared with the spec. It prints nothing; printers.StatusView shows a
// Report.
//
// Components come from the live inventory (the Deployments and StatefulSets carrying
// the platform's part-of label, two list requests) joined with the spec's enabled
// components, rather than from a fresh render of the stored spec: rendering needs the
// release catalog the platform was applied with (a --releases directory may be gone),
// and would say what ought to run instead of what runs. The spec still tells which
// components should exist, so a deleted workload shows as "not installed", and how
// many replicas each should have, so a workload scaled down behind the tool's back
// shows as not ready even though Kubernetes calls it available.
package status

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// Report is the state of one platform. Its JSON field names are part of the CLI's
// interface (`status -o json`): never rename them.
type Report struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Phase is the phase the last apply or upgrade recorded.
	Phase v1alpha1.Phase `json:"phase"`
	// SpecVersion is the version the stored spec asks for.
	SpecVersion string `json:"specVersion"`
	// Version is the version the last successful run installed.
	Version string `json:"version"`
	// Generation of the spec, and the generation the recorded status describes.
	Generation         int64 `json:"generation"`
	ObservedGeneration int64 `json:"observedGeneration"`
	// Ready is true when every component is ready, read from the live workloads: what
	// `status --wait` waits for.
	Ready bool `json:"ready"`
	// ReadyComponents is "ready/total", from the live workloads.
	ReadyComponents string `json:"readyComponents"`
	// Conditions are what the last run recorded, not read live: see
	// ConditionsRecordedAt and Condition.LiveDisagrees.
	Conditions []Condition `json:"conditions"`
	// ConditionsRecordedAt is the newest lastTransitionTime of the conditions: when
	// the last run recorded them, or at least when it started, since every run sets
	// Progressing as it starts. Nil when nothing was recorded.
	ConditionsRecordedAt *metav1.Time `json:"conditionsRecordedAt,omitempty"`
	// Components are read from the live workloads.
	Components []Component `json:"components"`
	// Upgrade is the upgrade in progress, if any.
	Upgrade *v1alpha1.UpgradeStatus `json:"upgrade,omitempty"`
	// History is the recorded revisions, oldest first.
	History []v1alpha1.Revision `json:"history,omitempty"`
	// ObservedAt is when the live workloads were read; ages are relative to it.
	ObservedAt metav1.Time `json:"observedAt"`
	// CreatedAt is when the OntoPlatform was created (the AGE of `status -A`).
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// DeletingSince is when the OntoPlatform was deleted, while finalizers (the
	// watch's uninstall) hold it; Finalizers names them.
	DeletingSince *metav1.Time `json:"deletingSince,omitempty"`
	Finalizers    []string     `json:"finalizers,omitempty"`
}

// Condition is one recorded condition of the platform.
type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// LiveDisagrees is set on the recorded Ready condition when the live workloads
	// contradict it: True recorded while a component is not ready now, or False
	// while every component is. The workloads changed since the last run, or that
	// run failed for another reason than readiness.
	LiveDisagrees bool `json:"liveDisagrees,omitempty"`
}

// Component is the live readiness of one component's workload.
type Component struct {
	Name  string `json:"name"`
	Plane string `json:"plane"`
	// Kind of the workload: Deployment or StatefulSet.
	Kind string `json:"kind"`
	// Workload is the name of the Deployment or StatefulSet.
	Workload string `json:"workload"`
	// DesiredReplicas is what the spec asks for (for an autoscaled component, what
	// its HorizontalPodAutoscaler chose, at least minReplicas).
	DesiredReplicas int32 `json:"desiredReplicas"`
	ReadyReplicas   int32 `json:"readyReplicas"`
	// Version is the workload's app.kubernetes.io/version label.
	Version string `json:"version,omitempty"`
	Ready   bool   `json:"ready"`
	// Message says why the component is not ready.
	Message string `json:"message,omitempty"`
	// Canary marks an upgrade's canary of the component: shown, not counted.
	Canary bool `json:"canary,omitempty"`
}

// Observer reads platform reports from one cluster.
type Observer struct {
	Clients *kube.Clients
	// Now is the clock for ObservedAt; time.Now when nil.
	Now func() time.Time
}

// workloadKinds are the kinds whose readiness makes a component's.
func workloadKinds() []schema.GroupKind {
	return []schema.GroupKind{{Group: "apps", Kind: health.KindDeployment}, {Group: "apps", Kind: health.KindStatefulSet}}
}

// observation is a report with the live objects it was made from, for Wait.
type observation struct {
	report   *Report
	platform *v1alpha1.OntoPlatform
	// targets are the live workloads and, for components with no workload, a
	// placeholder with the name and kind it would have.
	targets []*unstructured.Unstructured
	// expect is the spec's expectation of each target, by kind/name.
	expect map[string]health.Expectation
}

// Observe reports the platform name in namespace; an empty name means the only
// platform of the namespace. It returns an *inventory.NotFoundError or
// *inventory.AmbiguousError when there is no single platform to report on.
func (o *Observer) Observe(ctx context.Context, namespace, name string) (*Report, error) {
	obs, err := o.observe(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return obs.report, nil
}

func (o *Observer) lister() *inventory.Lister {
	return &inventory.Lister{Dynamic: o.Clients.Dynamic, Mapper: o.Clients.Mapper}
}

func (o *Observer) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Observer) observe(ctx context.Context, namespace, name string) (*observation, error) {
	l := o.lister()
	parent, err := l.Parent(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(parent.Object, &p); err != nil {
		return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", parent.GetNamespace(), parent.GetName(), err)
	}
	live, err := l.List(ctx, p.Namespace, inventory.ID(p.Namespace, p.Name), workloadKinds())
	if err != nil {
		return nil, err
	}
	obs := join(&p, live)
	obs.report.ObservedAt = metav1.NewTime(o.now())
	return obs, nil
}

// join builds the report of platform p from its live workloads.
func join(p *v1alpha1.OntoPlatform, live []*unstructured.Unstructured) *observation {
	st := p.Status
	r := &Report{
		Name: p.Name, Namespace: p.Namespace,
		Phase: st.Phase, SpecVersion: p.Spec.Version, Version: st.Version,
		Generation: p.Generation, ObservedGeneration: st.ObservedGeneration,
		Upgrade: st.Upgrade, History: st.History,
		Conditions: []Condition{}, Components: []Component{},
		DeletingSince: p.DeletionTimestamp, Finalizers: p.Finalizers,
	}
	for _, c := range st.Conditions {
		r.Conditions = append(r.Conditions, Condition{Type: c.Type, Status: string(c.Status),
			Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime})
		if r.ConditionsRecordedAt == nil || r.ConditionsRecordedAt.Before(&c.LastTransitionTime) {
			r.ConditionsRecordedAt = c.LastTransitionTime.DeepCopy()
		}
	}
	sort.SliceStable(r.Conditions, func(i, j int) bool { return conditionRank(r.Conditions[i].Type) < conditionRank(r.Conditions[j].Type) })

	if !p.CreationTimestamp.IsZero() {
		r.CreatedAt = p.CreationTimestamp.DeepCopy()
	}
	obs := &observation{report: r, platform: p, expect: map[string]health.Expectation{}}
	spec := map[string]v1alpha1.Component{}
	for _, c := range p.Spec.Components() {
		if c.Enabled() {
			spec[c.Name] = c
		}
	}
	seen := map[string]bool{}
	for _, w := range live {
		exp, inSpec := expectation(p, spec, w)
		if inSpec {
			seen[health.ComponentName(w)] = true
		}
		if health.IsCanary(w) {
			// One pod of the upgrade's target, beside its component.
			exp := health.Expectation{Version: ExpectedVersion(p, health.ComponentName(w)), Replicas: ptr.To(int32(1))}
			if u := p.Status.Upgrade; u != nil {
				exp.Version = u.To
			}
			c := component(health.ComponentStatusOf(w, exp), w.GetName())
			c.Canary = true
			r.Components = append(r.Components, c)
			continue
		}
		obs.targets = append(obs.targets, w)
		obs.expect[key(w)] = exp
		r.Components = append(r.Components, component(health.ComponentStatusOf(w, exp), w.GetName()))
	}
	for _, c := range p.Spec.Components() {
		if !c.Enabled() || seen[c.Name] {
			continue
		}
		exp := health.ExpectComponent(c, ExpectedVersion(p, c.Name))
		ph := placeholder(p.Namespace, c)
		obs.targets = append(obs.targets, ph)
		obs.expect[key(ph)] = exp
		r.Components = append(r.Components, component(health.MissingComponentStatus(c.Name, ph.GetKind(), exp), ph.GetName()))
	}
	sort.SliceStable(r.Components, func(i, j int) bool {
		a, b := r.Components[i], r.Components[j]
		if pa, pb := planeRank(a.Plane), planeRank(b.Plane); pa != pb {
			return pa < pb
		}
		return a.Name < b.Name
	})
	ready, total := 0, 0
	for _, c := range r.Components {
		if c.Canary {
			continue
		}
		total++
		if c.Ready {
			ready++
		}
	}
	r.ReadyComponents = fmt.Sprintf("%d/%d", ready, total)
	r.Ready = ready == total
	for i, c := range r.Conditions {
		recordedReady := c.Status == string(metav1.ConditionTrue)
		if c.Type == v1alpha1.ConditionReady && (recordedReady || c.Status == string(metav1.ConditionFalse)) {
			r.Conditions[i].LiveDisagrees = recordedReady != r.Ready
		}
	}
	return obs
}

func planeRank(plane string) int {
	i := slices.Index(v1alpha1.Planes(), v1alpha1.Plane(plane))
	if i < 0 {
		return len(v1alpha1.Planes())
	}
	return i
}

func conditionRank(typ string) int {
	i := slices.Index([]string{v1alpha1.ConditionReady, v1alpha1.ConditionProgressing, v1alpha1.ConditionDegraded}, typ)
	if i < 0 {
		return 3
	}
	return i
}
