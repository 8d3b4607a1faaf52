/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// expectation is what the stored spec asks of live workload w of platform p: what its
// component asks, or for a workload the spec has no section for (such as
// redis-sentinel), only the platform's version. inSpec says which.
func expectation(p *v1alpha1.OntoPlatform, spec map[string]v1alpha1.Component, w *unstructured.Unstructured) (e health.Expectation, inSpec bool) {
	version := ExpectedVersion(p, health.ComponentName(w))
	if c, ok := spec[health.ComponentName(w)]; ok {
		return health.ExpectComponent(c, version), true
	}
	return health.Expectation{Version: version}, false
}

// ExpectedVersion is the version component should run: the stored spec's, except
// during an upgrade, when the components it has moved (done, and the current one)
// run its target and the others still the version it started from.
func ExpectedVersion(p *v1alpha1.OntoPlatform, component string) string {
	u := p.Status.Upgrade
	if u == nil {
		return p.Spec.Version
	}
	if component == u.Current || slices.Contains(u.Done, component) {
		return u.To
	}
	return u.From
}

// component is the report line of a component from the status health computed for it.
func component(cs v1alpha1.ComponentStatus, workload string) Component {
	return Component{
		Name: cs.Name, Plane: cs.Plane, Kind: cs.Kind, Workload: workload,
		DesiredReplicas: cs.DesiredReplicas, ReadyReplicas: cs.ReadyReplicas,
		Version: cs.Version, Ready: cs.Ready, Message: cs.Message,
	}
}

// placeholder stands for the workload of a component that has none, so a wait
// notices when it appears.
func placeholder(namespace string, c v1alpha1.Component) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	kind := health.KindDeployment
	if c.Stateful != nil {
		kind = health.KindStatefulSet
	}
	u.SetAPIVersion("apps/v1")
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(c.Name)
	return u
}

// key identifies a workload among the targets of a wait.
func key(w *unstructured.Unstructured) string {
	return w.GetKind() + "/" + w.GetName()
}
