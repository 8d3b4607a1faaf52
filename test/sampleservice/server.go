/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Service is the sample platform service: its HTTP API, its gRPC port and what both do.
type Service struct {
	Config    Config
	Backends  []Backend
	Upstreams []*upstream
	Ready     *Readiness
	Metrics   *Metrics
	Log       *slog.Logger
	Tracer    trace.Tracer
	// Rand is the failing share's source, in [0, 1); Sleep waits out a slow mode's delay.
	Rand  func() float64
	Sleep func(context.Context, time.Duration)
}

// WorkResult is /work's answer.
type WorkResult struct {
	Component string            `json:"component"`
	Pod       string            `json:"pod,omitempty"`
	Version   string            `json:"version,omitempty"`
	OK        bool              `json:"ok"`
	Backends  map[string]string `json:"backends"`
	TraceID   string            `json:"traceID,omitempty"`
}

// Handler is the HTTP API of the service port:
//
//	GET /healthz  200 while the process serves (liveness)
//	GET /readyz   200 while every backing service answered recently, else 503 and why
//	GET /work     one request's worth of work on each backing service (and each upstream
//	              of the gateway); 200 and what each said, 503 when one failed, 500 when
//	              the mode fails it on purpose
//	GET /config   the configuration read from the environment, without secrets
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, why := s.Ready.Ready()
		if !ok {
			http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Config)
	})
	mux.HandleFunc("GET /work", s.work)
	return s.instrument(mux)
}

func (s *Service) work(w http.ResponseWriter, r *http.Request) {
	s.Metrics.APIRequest()
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := s.Tracer.Start(ctx, "work", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	start := time.Now()
	// A slow mode holds the answer back, before it is written, on the request's own
	// context (the work's timeout below is over by then).
	finish := func(code int, res WorkResult) {
		s.Sleep(r.Context(), s.Config.Mode.ExtraDelay(time.Since(start)))
		writeJSON(w, code, res)
	}

	res := WorkResult{Component: s.Config.Component, Pod: s.Config.PodName, Version: s.Config.Version, OK: true, Backends: map[string]string{}}
	if sc := span.SpanContext(); sc.IsSampled() {
		res.TraceID = sc.TraceID().String()
	}
	code := http.StatusOK
	if s.Config.Mode.Fails(s.Rand()) {
		span.SetStatus(codes.Error, "failed on purpose")
		res.OK, code = false, http.StatusInternalServerError
		res.Backends["mode"] = s.Config.Mode.Name + ": failed on purpose"
		finish(code, res)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, b := range s.Backends {
		bctx, bspan := s.Tracer.Start(ctx, b.Name(), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("backend", b.Name())))
		err := b.Work(bctx)
		result := "ok"
		if err != nil {
			bspan.RecordError(err)
			bspan.SetStatus(codes.Error, err.Error())
			result, res.OK = "error", false
			res.Backends[b.Name()] = err.Error()
			s.Log.Warn("work failed", "backend", b.Name(), "err", err)
		} else {
			res.Backends[b.Name()] = "ok"
		}
		s.Metrics.Work.WithLabelValues(b.Name(), result).Inc()
		bspan.End()
	}
	for _, u := range s.Upstreams {
		if err := u.check(ctx); err != nil {
			res.OK = false
			res.Backends["upstream/"+u.name] = err.Error()
		} else {
			res.Backends["upstream/"+u.name] = "ok"
		}
	}
	if !res.OK {
		code = http.StatusServiceUnavailable
		span.SetStatus(codes.Error, "a backing service failed")
	}
	s.Log.Debug("work", "ok", res.OK, "took", time.Since(start))
	finish(code, res)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// instrument counts and times every request by handler (its path) and code.
func (s *Service) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		handler := r.URL.Path
		switch handler {
		case "/healthz", "/readyz", "/work", "/config":
		default:
			handler = "other"
		}
		s.Metrics.HTTPRequests.WithLabelValues(handler, strconv.Itoa(sw.code)).Inc()
		s.Metrics.HTTPLatency.WithLabelValues(handler).Observe(time.Since(start).Seconds())
		s.Log.Debug("request", "method", r.Method, "path", r.URL.Path, "code", sw.code, "took", time.Since(start))
	})
}

// UnaryInterceptor counts every gRPC call and applies the mode: a failing share answers
// Unavailable, a slow mode delays the answer.
func (s *Service) UnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	s.Metrics.APIRequest()
	start := time.Now()
	var resp any
	var err error
	if s.Config.Mode.Fails(s.Rand()) {
		err = status.Error(grpccodes.Unavailable, "failed on purpose ("+s.Config.Mode.Name+")")
	} else {
		resp, err = handler(ctx, req)
	}
	s.Sleep(ctx, s.Config.Mode.ExtraDelay(time.Since(start)))
	s.Metrics.GRPCRequests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	return resp, err
}

// serverTLS serves the certificate of the files, read again when they change: the
// Secret's files are replaced when the certificate is renewed.
func serverTLS(certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	l := &certLoader{certFile: certFile, keyFile: keyFile, log: log}
	if _, err := l.get(nil); err != nil {
		return nil, err
	}
	return &tls.Config{GetCertificate: l.get, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, nil
}
