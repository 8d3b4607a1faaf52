/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// MessageNotInstalled is the message of a component whose workload does not exist.
const MessageNotInstalled = "not installed"

// Expectation is what the platform asks of one workload. A component is ready when its
// live workload is ready by kstatus and meets its expectation. `status` builds
// expectations from the stored spec and apply from the rendered workloads, but both
// judge with Check and report with ComponentStatusOf, so the status apply records and
// the one `status` reads live agree whenever the workloads have not changed between.
type Expectation struct {
	// Replicas is how many replicas the workload must run. Nil leaves the count to the
	// live workload: an autoscaled one, whose HorizontalPodAutoscaler chooses, or one
	// the spec does not describe (such as redis-sentinel, read from the inventory).
	Replicas *int32
	// MinReplicas is the least an autoscaled workload may run: the autoscaler's floor,
	// which a manual scale-down can break until the autoscaler acts.
	MinReplicas int32
	// Version the workload must run, by its version label; "" accepts any.
	Version string
	// Plane of the component, for a workload that lacks the plane label.
	Plane string
}

// ExpectComponent is what spec component c asks of its workload on a platform at
// version.
func ExpectComponent(c v1alpha1.Component, version string) Expectation {
	e := Expectation{Version: version, Plane: string(c.Plane)}
	if c.Autoscaled() {
		e.MinReplicas = c.Service.Autoscaling.MinReplicas
		return e
	}
	n := c.DesiredReplicas()
	e.Replicas = &n
	return e
}

// ExpectWorkload is what a rendered workload asks of its live counterpart: the
// rendered replicas (none when a HorizontalPodAutoscaler owns them: the count an
// autoscaled workload renders is its size at creation only) and version label.
// The renderer writes both from the spec, so this is ExpectComponent read back from
// the render, except for an autoscaled workload's floor, which lives on its
// HorizontalPodAutoscaler (see ObserveComponents).
func ExpectWorkload(desired *unstructured.Unstructured) Expectation {
	e := Expectation{Version: desired.GetLabels()[versionLabel], Plane: desired.GetLabels()[planeLabel]}
	if v1alpha1.CreateOnlyReplicas(desired.GetAnnotations()) {
		return e
	}
	if n, found, _ := unstructured.NestedInt64(desired.Object, "spec", "replicas"); found {
		r := int32(n)
		e.Replicas = &r
	}
	return e
}

// Want is the number of replicas live should run: the expected count, or for a count
// left to the live workload, its own, never below MinReplicas.
func (e Expectation) Want(live *unstructured.Unstructured) int32 {
	if e.Replicas != nil {
		return *e.Replicas
	}
	n, _ := Replicas(live)
	return max(n, e.MinReplicas)
}

// wantMissing is Want for a workload that does not exist: an unset count is what the
// API server would default it to, one.
func (e Expectation) wantMissing() int32 {
	if e.Replicas != nil {
		return *e.Replicas
	}
	return max(1, e.MinReplicas)
}

// Check decides whether live is ready for the expectation: as many replicas as
// expected, at the expected version, ready by kstatus (rolled out, observed,
// available), and as many ready as expected. The first failing rule is the message,
// in that order, because a scale-down or an old version explains a kstatus failure
// better than kstatus does.
func (e Expectation) Check(live *unstructured.Unstructured) Ready {
	want := e.Want(live)
	replicas, ready := Replicas(live)
	if replicas < want {
		return Ready{Message: fmt.Sprintf("scaled to %d replicas, the spec asks for %d", replicas, want)}
	}
	if v := live.GetLabels()[versionLabel]; v != "" && e.Version != "" && v != e.Version {
		return Ready{Message: fmt.Sprintf("runs version %s, the spec asks for %s", v, e.Version)}
	}
	if r := Check(live); !r.Ready {
		return r
	}
	if ready < want {
		return Ready{Message: fmt.Sprintf("%d/%d replicas ready", ready, want)}
	}
	return Ready{Ready: true}
}

// ComponentStatusOf is the status of the component live runs, judged against e.
func ComponentStatusOf(live *unstructured.Unstructured, e Expectation) v1alpha1.ComponentStatus {
	_, ready := Replicas(live)
	r := e.Check(live)
	cs := v1alpha1.ComponentStatus{
		Name:            ComponentName(live),
		Plane:           live.GetLabels()[planeLabel],
		Kind:            live.GetKind(),
		DesiredReplicas: e.Want(live),
		ReadyReplicas:   ready,
		Version:         live.GetLabels()[versionLabel],
		Ready:           r.Ready,
	}
	if !r.Ready {
		cs.Message = r.Message
	}
	if cs.Plane == "" {
		cs.Plane = e.Plane
	}
	return cs
}

// MissingComponentStatus is the status of component name whose workload, of kind, does
// not exist.
func MissingComponentStatus(name, kind string, e Expectation) v1alpha1.ComponentStatus {
	return v1alpha1.ComponentStatus{Name: name, Plane: e.Plane, Kind: kind, DesiredReplicas: e.wantMissing(), Message: MessageNotInstalled}
}

// ComponentName is the component a workload runs: its app.kubernetes.io/name label,
// else its name.
func ComponentName(w *unstructured.Unstructured) string {
	if n := w.GetLabels()[nameLabel]; n != "" {
		return n
	}
	return w.GetName()
}

// CountReady returns how many components are ready, of how many.
func CountReady(cs []v1alpha1.ComponentStatus) (ready, total int) {
	for _, c := range cs {
		if c.Ready {
			ready++
		}
	}
	return ready, len(cs)
}
