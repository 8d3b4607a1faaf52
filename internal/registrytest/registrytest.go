/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package registrytest serves an OCI registry (distribution's, in process, with
// in-memory storage) for tests that push and pull images.
package registrytest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"github.com/sirupsen/logrus"
)

// Start serves the registry on a free port of 127.0.0.1 until the test ends, and
// returns its host:port (plain HTTP: go-containerregistry talks HTTP to a
// loopback registry by itself, name.Insecure says so for any other host).
func Start(t testing.TB) string {
	t.Helper()
	logrus.SetOutput(io.Discard) // its access and request logs
	cfg := &configuration.Configuration{Storage: configuration.Storage{"inmemory": configuration.Parameters{}}}
	cfg.HTTP.Secret = "kubectl-onto-registry-test"
	cfg.Log.AccessLog.Disabled = true
	ctx, cancel := context.WithCancel(context.Background())
	app := handlers.NewApp(ctx, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv := &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("registry: %v", err)
		}
	})
	return ln.Addr().String()
}
