/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

// The rendered workloads, reduced to what the capacity (ONTO-PRE-007) and quota
// (ONTO-PRE-008) checks count: replicas, one pod's requests and limits, the pods a
// rolling update or an upgrade's canary adds.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// preWorkload is a rendered Deployment or StatefulSet, reduced to what capacity and
// quota need.
type preWorkload struct {
	Object    string // deployment/name
	Component string
	Plane     string
	Replicas  int64
	Spec      corev1.PodSpec
	// Requests and Limits of one pod, as the scheduler and quota count them.
	Requests, Limits corev1.ResourceList
	// Surge is how many pods a rolling update adds beyond Replicas.
	Surge int64
	// Canary is whether an upgrade runs a canary pod beside the old ones (a
	// Deployment that may surge; with maxSurge 0 the canary replaces an old pod, and a
	// StatefulSet updates its top ordinal in place).
	Canary bool
}

// preWorkloads reads the rendered workloads; bad lists those whose pod template could
// not be read.
func preWorkloads(env *Env) (ws []preWorkload, bad []string) {
	hpaMin := map[string]int64{}
	for _, o := range env.Rendered() {
		if o.GetKind() != "HorizontalPodAutoscaler" {
			continue
		}
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "name")
		n, ok := preInt(o.Object, "spec", "minReplicas")
		if !ok {
			n = 1
		}
		hpaMin[kind+"/"+name] = n
	}
	for _, pl := range env.Planes() {
		for _, o := range pl.Objects {
			if !health.IsWorkload(o) {
				continue
			}
			w := preWorkload{Object: preObject(o), Component: health.ComponentName(o), Plane: string(pl.Name)}
			tmpl, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &w.Spec); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", w.Object, err))
				continue
			}
			// An autoscaled workload renders the count it is created with (at least the
			// HPA's minReplicas; the HPA may add more under load, the scaling checks'
			// business); one that renders none starts at the HPA's floor, or 1.
			n, ok := preInt(o.Object, "spec", "replicas")
			if !ok {
				n = 1
				if m, has := hpaMin[o.GetKind()+"/"+o.GetName()]; has {
					n = m
				}
			}
			w.Replicas = n
			w.Requests, w.Limits = prePodResources(&w.Spec)
			if o.GetKind() == health.KindDeployment {
				w.Surge, w.Canary = preDeploymentSurge(o, n)
			}
			ws = append(ws, w)
		}
	}
	return ws, bad
}

// preDeploymentSurge is the pods a rolling update of dep adds, and whether an upgrade
// adds a canary pod (see upgrade's noSurge: only maxSurge 0 makes the canary take an
// old pod's place).
func preDeploymentSurge(dep *unstructured.Unstructured, replicas int64) (int64, bool) {
	raw, found, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "strategy", "rollingUpdate", "maxSurge")
	surge := intstr.FromString("25%")
	if found && raw != nil {
		switch v := raw.(type) {
		case int64:
			surge = intstr.FromInt(int(v))
		case int:
			surge = intstr.FromInt(v)
		case float64:
			surge = intstr.FromInt(int(v))
		case string:
			surge = intstr.Parse(v)
		}
	}
	canary := !(surge.Type == intstr.Int && surge.IntValue() == 0) && !(surge.Type == intstr.String && (surge.StrVal == "0" || surge.StrVal == "0%"))
	if t, _, _ := unstructured.NestedString(dep.Object, "spec", "strategy", "type"); t == "Recreate" {
		return 0, canary
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&surge, int(replicas), true)
	if err != nil || n < 0 {
		return 0, canary
	}
	return int64(n), canary
}

// preInt reads an integer field that may have come from YAML or JSON (int64 or
// float64).
func preInt(obj map[string]any, fields ...string) (int64, bool) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !found {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// preSurge is the most the platform's pods may exceed their steady state at one
// moment, pod being what one pod of a workload counts. An apply rolls the Deployments
// of one plane at once and waits for that plane to be healthy before the next, so the
// rolling surge is the largest plane's sum, not every plane's. An upgrade moves one
// component at a time, so it adds the largest component's canaries (one pod per
// Deployment of that component), not one per component. Both together bound the
// worst moment (an upgrade's rollout of a component while its canary still runs).
func preSurge(ws []preWorkload, pod func(*preWorkload) corev1.ResourceList) corev1.ResourceList {
	byPlane := map[string]corev1.ResourceList{}
	byComponent := map[string]corev1.ResourceList{}
	for i := range ws {
		w := &ws[i]
		if w.Replicas <= 0 {
			continue
		}
		if w.Surge > 0 {
			if byPlane[w.Plane] == nil {
				byPlane[w.Plane] = corev1.ResourceList{}
			}
			preAdd(byPlane[w.Plane], pod(w), w.Surge)
		}
		if w.Canary {
			if byComponent[w.Component] == nil {
				byComponent[w.Component] = corev1.ResourceList{}
			}
			preAdd(byComponent[w.Component], pod(w), 1)
		}
	}
	rolling, canary := corev1.ResourceList{}, corev1.ResourceList{}
	for _, l := range byPlane {
		preMaxInto(rolling, l)
	}
	for _, l := range byComponent {
		preMaxInto(canary, l)
	}
	preAdd(rolling, canary, 1)
	return rolling
}

// preSteady is the sum over ws of replicas times what one pod counts.
func preSteady(ws []preWorkload, pod func(*preWorkload) corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := range ws {
		if ws[i].Replicas > 0 {
			preAdd(out, pod(&ws[i]), ws[i].Replicas)
		}
	}
	return out
}
