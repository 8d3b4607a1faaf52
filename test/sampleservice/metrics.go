/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are what the service exports on its metrics port, in a registry of its own.
type Metrics struct {
	Registry *prometheus.Registry

	HTTPRequests *prometheus.CounterVec   // by handler, code
	HTTPLatency  *prometheus.HistogramVec // by handler
	GRPCRequests *prometheus.CounterVec   // by method, code
	BackendUp    *prometheus.GaugeVec     // by backend
	Reconnects   *prometheus.CounterVec   // by backend
	Work         *prometheus.CounterVec   // by backend, result
	RPS          prometheus.Gauge

	rate *RateWindow
}

// RPSWindow is the window grpc_requests_per_second averages over.
const RPSWindow = 10 * time.Second

func NewMetrics(c Config) *Metrics {
	labels := prometheus.Labels{"component": c.Component}
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		HTTPRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "HTTP requests served, by handler and status code.", ConstLabels: labels,
		}, []string{"handler", "code"}),
		HTTPLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "Latency of HTTP requests, by handler.", ConstLabels: labels,
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"handler"}),
		GRPCRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total", Help: "gRPC calls completed, by method and code.", ConstLabels: labels,
		}, []string{"grpc_method", "grpc_code"}),
		BackendUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "onto_backend_up", Help: "1 when the backing service answered the last ping.", ConstLabels: labels,
		}, []string{"backend"}),
		Reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "onto_backend_reconnects_total", Help: "Times a backing service answered again after failing.", ConstLabels: labels,
		}, []string{"backend"}),
		Work: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "onto_work_total", Help: "Work done on each backing service by /work, by result.", ConstLabels: labels,
		}, []string{"backend", "result"}),
		RPS: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "grpc_requests_per_second", ConstLabels: labels,
			Help: "API requests (gRPC calls and HTTP /work) per second over the last 10 s: the HPA's Pods metric.",
		}),
		rate: NewRateWindow(RPSWindow),
	}
	m.Registry.MustRegister(m.HTTPRequests, m.HTTPLatency, m.GRPCRequests, m.BackendUp, m.Reconnects, m.Work, m.RPS,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, b := range c.Backends() {
		m.BackendUp.WithLabelValues(b).Set(0)
		m.Reconnects.WithLabelValues(b)
	}
	return m
}

// OnPing records a ping of a backend.
func (m *Metrics) OnPing(backend string, up, reconnected bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.BackendUp.WithLabelValues(backend).Set(v)
	if reconnected {
		m.Reconnects.WithLabelValues(backend).Inc()
	}
}

// APIRequest counts one request toward grpc_requests_per_second.
func (m *Metrics) APIRequest() { m.rate.Add(1) }

// Tick moves the rate window on; called once a second.
func (m *Metrics) Tick(now time.Time) { m.RPS.Set(m.rate.Rate(now)) }

// RateWindow is a count per second over a sliding window, from a running counter and
// its value sampled at each Rate call.
type RateWindow struct {
	window time.Duration
	count  atomic.Int64

	mu      sync.Mutex
	samples []rateSample
}

type rateSample struct {
	at    time.Time
	count int64
}

func NewRateWindow(window time.Duration) *RateWindow { return &RateWindow{window: window} }

func (r *RateWindow) Add(n int64) { r.count.Add(n) }

// Rate is the count per second between the oldest sample within the window and now,
// taken over the whole window (a service that just started reads low rather than high).
func (r *RateWindow) Rate(now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.count.Load()
	r.samples = append(r.samples, rateSample{now, c})
	for len(r.samples) > 1 && now.Sub(r.samples[1].at) >= r.window {
		r.samples = r.samples[1:]
	}
	oldest := r.samples[0]
	if len(r.samples) == 1 {
		return 0
	}
	return float64(c-oldest.count) / r.window.Seconds()
}
