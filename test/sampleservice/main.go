/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command sample-service stands in for the platform's own services (ontology-service,
// auth-service, ...) in the tests that run on real nodes: it does with the
// environment a rendered service receives what a real service does. It connects to
// each backing service it is given (Postgres with pgx, Redis with go-redis, MinIO with
// minio-go, Kafka with franz-go; TLS when told), is ready only while they answer,
// serves a small HTTP API on HTTP_PORT and gRPC health on GRPC_PORT, exports
// Prometheus metrics on METRICS_PORT, logs with log/slog at LOG_LEVEL in LOG_FORMAT
// and sends traces where OTEL_EXPORTER_OTLP_ENDPOINT says. ONTO_SAMPLE_MODE makes it
// misbehave on purpose (see Mode), which the upgrade tests use.
//
// It is its own module: its client libraries stay out of kubectl-onto's go.mod.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	grpccreds "google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if ok, err := runClient(ctx, os.Args[1:], os.Stdout); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, "sample-service:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Getenv, os.Environ(), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sample-service:", err)
		os.Exit(1)
	}
}

// NewLogger is the service's logger: JSON or text at the configured level, with the
// component and pod on every line.
func NewLogger(w io.Writer, c Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if c.LogFormat == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h).With("component", c.Component, "pod", c.PodName)
}

func run(ctx context.Context, getenv func(string) string, environ []string, stderr io.Writer) error {
	cfg, err := LoadConfig(getenv, environ)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := NewLogger(stderr, cfg)
	// go-redis logs its pool's dial failures through a logger of its own: into ours,
	// at debug (the readiness loop reports the outage once, at warn).
	redis.SetLogger(redisLogger{log})
	log.Info("starting", "version", cfg.Version, "platform", cfg.Platform, "backends", cfg.Backends(),
		"upstreams", cfg.UpstreamNames(), "tls", cfg.TLSEnabled, "tracing", cfg.Tracing.Enabled, "mode", cfg.Mode.Name)

	tracer, shutdownTracing, err := newTracer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer shutdownTracing()

	backends, err := NewBackends(cfg)
	if err != nil {
		return err
	}
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	upstreams, err := newUpstreams(cfg)
	if err != nil {
		return err
	}
	metrics := NewMetrics(cfg)
	svc := &Service{
		Config: cfg, Backends: backends, Upstreams: upstreams, Metrics: metrics, Log: log, Tracer: tracer,
		Rand: randFloat, Sleep: sleepCtx,
		Ready: &Readiness{
			Backends: backends, Interval: 5 * time.Second, Timeout: 3 * time.Second, Stale: 15 * time.Second,
			Now: time.Now, Log: log, OnPing: metrics.OnPing, NeverReady: cfg.Mode.NeverReady,
		},
	}

	var tlsCfg *tls.Config
	if cfg.TLSEnabled {
		if tlsCfg, err = serverTLS(cfg.TLSCertFile, cfg.TLSKeyFile, log); err != nil {
			return fmt.Errorf("serving certificate: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 4)

	httpSrv := &http.Server{Addr: ":" + strconv.Itoa(cfg.HTTPPort), Handler: svc.Handler(), TLSConfig: tlsCfg,
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	wg.Go(func() {
		var err error
		if tlsCfg != nil {
			err = httpSrv.ListenAndServeTLS("", "")
		} else {
			err = httpSrv.ListenAndServe()
		}
		if !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	})

	grpcOpts := []grpc.ServerOption{grpc.UnaryInterceptor(svc.UnaryInterceptor)}
	if tlsCfg != nil {
		grpcOpts = append(grpcOpts, grpc.Creds(grpccreds.NewTLS(tlsCfg)))
	}
	grpcSrv := grpc.NewServer(grpcOpts...)
	healthSrv := health.NewServer()
	healthpb.RegisterHealthServer(grpcSrv, healthSrv)
	grpcLn, err := net.Listen("tcp", ":"+strconv.Itoa(cfg.GRPCPort))
	if err != nil {
		return fmt.Errorf("grpc: %w", err)
	}
	wg.Go(func() {
		if err := grpcSrv.Serve(grpcLn); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			errc <- fmt.Errorf("grpc: %w", err)
		}
	})

	var metricsSrv *http.Server
	if cfg.MetricsEnabled {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Addr: ":" + strconv.Itoa(cfg.MetricsPort), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		wg.Go(func() {
			if err := metricsSrv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics: %w", err)
			}
		})
	}

	wg.Go(func() { svc.Ready.Run(ctx) })
	wg.Go(func() {
		// The gRPC health status and the request rate follow readiness, once a second.
		t := time.NewTicker(time.Second)
		defer t.Stop()
		last := healthpb.HealthCheckResponse_UNKNOWN
		for {
			st := healthpb.HealthCheckResponse_NOT_SERVING
			if ok, _ := svc.Ready.Ready(); ok {
				st = healthpb.HealthCheckResponse_SERVING
			}
			if st != last {
				healthSrv.SetServingStatus("", st)
				last = st
			}
			metrics.Tick(time.Now())
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	if cfg.Mode.OOM {
		wg.Go(func() { allocate(ctx, log) })
	}
	log.Info("serving", "http", cfg.HTTPPort, "grpc", cfg.GRPCPort, "metrics", cfg.MetricsEnabled, "metricsPort", cfg.MetricsPort)

	var runErr error
	crash := make(<-chan time.Time)
	if cfg.Mode.Crash {
		crash = time.After(CrashAfter)
	}
	select {
	case <-ctx.Done():
		log.Info("stopping")
	case runErr = <-errc:
	case <-crash:
		runErr = fmt.Errorf("crashing on purpose %s after start (mode crash)", CrashAfter)
		log.Error("crash", "after", CrashAfter)
	}
	cancel()
	healthSrv.Shutdown()
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	_ = httpSrv.Shutdown(sctx)
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(sctx)
	}
	grpcSrv.GracefulStop()
	wg.Wait()
	return runErr
}

// newTracer is a tracer exporting over OTLP gRPC as the OTel SDK's variables say
// (endpoint, service name, resource attributes, sampler and its ratio, all read by
// the SDK itself), or a no-op one when OTEL_SDK_DISABLED is true or no endpoint is set.
func newTracer(ctx context.Context, c Config) (trace.Tracer, func(), error) {
	if !c.Tracing.Enabled {
		return noop.NewTracerProvider().Tracer("sample-service"), func() {}, nil
	}
	exp, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, nil, err
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp.Tracer("sample-service"), func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(sctx)
	}, nil
}

// allocate grows the heap by OOMChunk every OOMInterval, touching every page so the
// memory is resident, until the kernel's OOM killer ends the process.
func allocate(ctx context.Context, log *slog.Logger) {
	var held [][]byte
	t := time.NewTicker(OOMInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b := make([]byte, OOMChunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
		log.Info("allocated", "mode", "oom", "MiB", len(held)*OOMChunk>>20)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "library", "go-redis")
}

// certLoader reads the certificate and key again when the certificate file changes.
type certLoader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.Mutex
	modTime time.Time
	cert    *tls.Certificate
}

func (l *certLoader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := os.Stat(l.certFile)
	if err != nil {
		if l.cert != nil {
			return l.cert, nil
		}
		return nil, err
	}
	if l.cert != nil && st.ModTime().Equal(l.modTime) {
		return l.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(l.certFile, l.keyFile)
	if err != nil {
		if l.cert != nil {
			l.log.Warn("serving certificate changed but does not load; keeping the previous", "err", err)
			return l.cert, nil
		}
		return nil, err
	}
	if l.cert != nil {
		l.log.Info("serving certificate reloaded")
	}
	l.cert, l.modTime = &cert, st.ModTime()
	return l.cert, nil
}
