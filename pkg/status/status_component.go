/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// Labels read from live workloads.
const (
	nameLabel    = "app.kubernetes.io/name"
	versionLabel = "app.kubernetes.io/version"
	planeLabel   = "onto.paas/plane"
)

// expectation is what the spec says about one workload.
type expectation struct {
	// component is the spec's component the workload runs; zero when inSpec is false
	// (a workload the spec has no section for, such as redis-sentinel).
	component v1alpha1.Component
	inSpec    bool
	// version the spec asks for.
	version string
}

// want is the number of replicas the workload should run. An autoscaled component
// runs what its HorizontalPodAutoscaler chose, but never fewer than minReplicas; a
// workload the spec does not describe, what its own spec says.
func (e expectation) want(live *unstructured.Unstructured) int32 {
	liveReplicas, _ := health.Replicas(live)
	if !e.inSpec {
		return liveReplicas
	}
	if e.component.Autoscaled() {
		if minReplicas := e.component.Service.Autoscaling.MinReplicas; liveReplicas < minReplicas {
			return minReplicas
		}
		return liveReplicas
	}
	return e.component.DesiredReplicas()
}

// check decides whether a live workload is ready for the spec: kstatus readiness
// (rolled out, observed, available), as many replicas as the spec asks for, at the
// spec's version.
func (e expectation) check(live *unstructured.Unstructured) health.Ready {
	want := e.want(live)
	replicas, ready := health.Replicas(live)
	if replicas < want {
		return health.Ready{Message: fmt.Sprintf("scaled to %d replicas, the spec asks for %d", replicas, want)}
	}
	if v := live.GetLabels()[versionLabel]; v != "" && e.version != "" && v != e.version {
		return health.Ready{Message: fmt.Sprintf("runs version %s, the spec asks for %s", v, e.version)}
	}
	if r := health.Check(live); !r.Ready {
		return r
	}
	if ready < want {
		return health.Ready{Message: fmt.Sprintf("%d/%d replicas ready", ready, want)}
	}
	return health.Ready{Ready: true}
}

// componentStatus is the report line of one live workload.
func componentStatus(live *unstructured.Unstructured, e expectation) Component {
	_, ready := health.Replicas(live)
	r := e.check(live)
	c := Component{
		Name:            componentName(live),
		Plane:           live.GetLabels()[planeLabel],
		Kind:            live.GetKind(),
		Workload:        live.GetName(),
		DesiredReplicas: e.want(live),
		ReadyReplicas:   ready,
		Version:         live.GetLabels()[versionLabel],
		Ready:           r.Ready,
	}
	if !r.Ready {
		c.Message = r.Message
	}
	if c.Plane == "" && e.inSpec {
		c.Plane = string(e.component.Plane)
	}
	return c
}

func componentName(w *unstructured.Unstructured) string {
	if n := w.GetLabels()[nameLabel]; n != "" {
		return n
	}
	return w.GetName()
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
