/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Metrics are the reconciler's own, beside controller-runtime's.
type Metrics struct {
	driftRepairs prometheus.Counter
	ready        *prometheus.GaugeVec
	remediations *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg (controller-runtime's metrics.Registry).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		driftRepairs: prometheus.NewCounter(prometheus.CounterOpts{Name: "onto_drift_repairs_total",
			Help: "Objects the reconciler wrote back to the applied spec after they drifted."}),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "onto_platform_ready",
			Help: "1 when every component of the platform is ready, 0 otherwise."}, []string{"namespace", "name"}),
		remediations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "onto_remediations_total",
			Help: "Reactions to failing pods: crash-looping revisions reported (crashloop), evicted pods reported (evicted), pods on a lost node evicted or reported (lost-node)."},
			[]string{"reason"}),
	}
	// A second manager in one process (tests) shares the first one's collectors.
	var are prometheus.AlreadyRegisteredError
	if err := reg.Register(m.driftRepairs); errors.As(err, &are) {
		m.driftRepairs = are.ExistingCollector.(prometheus.Counter)
	}
	if err := reg.Register(m.ready); errors.As(err, &are) {
		m.ready = are.ExistingCollector.(*prometheus.GaugeVec)
	}
	if err := reg.Register(m.remediations); errors.As(err, &are) {
		m.remediations = are.ExistingCollector.(*prometheus.CounterVec)
	}
	return m
}

func (m *Metrics) driftRepaired(n int) {
	if m != nil {
		m.driftRepairs.Add(float64(n))
	}
}

func (m *Metrics) setReady(p *v1alpha1.OntoPlatform, ready bool) {
	if m == nil {
		return
	}
	v := 0.0
	if ready {
		v = 1
	}
	m.ready.WithLabelValues(p.Namespace, p.Name).Set(v)
}

func (m *Metrics) remediated(reason string) {
	if m != nil {
		m.remediations.WithLabelValues(reason).Inc()
	}
}

// forget drops a deleted platform's gauge, so no stale 0 keeps an alert firing.
func (m *Metrics) forget(p *v1alpha1.OntoPlatform) {
	if m != nil {
		m.ready.DeleteLabelValues(p.Namespace, p.Name)
	}
}
