/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// Backend is one backing service the service talks to.
type Backend interface {
	// Name is the backing service: postgres, redis, minio, kafka.
	Name() string
	// Ping asks the server to answer (SELECT 1, PING, a bucket listing, a metadata
	// request); it reconnects when the connection was lost.
	Ping(ctx context.Context) error
	// Work is one request's worth of work on it: a query, an INCR, a PUT and GET, a
	// produced record.
	Work(ctx context.Context) error
	Close()
}

// Readiness pings every backend every Interval and reports ready while each answered
// within Stale. The first answer after a failure counts as a reconnect.
type Readiness struct {
	Backends []Backend
	Interval time.Duration
	Timeout  time.Duration
	Stale    time.Duration
	Now      func() time.Time
	Log      *slog.Logger
	// OnPing hears each ping's outcome (the metrics).
	OnPing func(backend string, up, reconnected bool)
	// NeverReady holds readiness down whatever the backends say.
	NeverReady bool

	mu    sync.Mutex
	state map[string]*backendState
}

type backendState struct {
	lastOK  time.Time
	lastErr error
	// down: the last ping failed (or none succeeded yet); everSeen: one succeeded.
	down, everSeen bool
}

// CheckOnce pings every backend once, concurrently, and records the outcome.
func (r *Readiness) CheckOnce(ctx context.Context) {
	var wg sync.WaitGroup
	for _, b := range r.Backends {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, r.Timeout)
			defer cancel()
			err := b.Ping(pctx)
			r.record(b.Name(), err)
		})
	}
	wg.Wait()
}

func (r *Readiness) record(name string, err error) {
	r.mu.Lock()
	if r.state == nil {
		r.state = map[string]*backendState{}
	}
	s := r.state[name]
	if s == nil {
		s = &backendState{down: true}
		r.state[name] = s
	}
	wasDown, everSeen := s.down, s.everSeen
	s.lastErr = err
	if err == nil {
		s.lastOK, s.down, s.everSeen = r.Now(), false, true
	} else {
		s.down = true
	}
	r.mu.Unlock()

	reconnected := err == nil && wasDown && everSeen
	switch {
	case err != nil && !wasDown:
		r.Log.Warn("backend lost", "backend", name, "err", err)
	case err != nil:
		r.Log.Debug("backend down", "backend", name, "err", err)
	case reconnected:
		r.Log.Info("backend reconnected", "backend", name)
	case wasDown:
		r.Log.Info("backend connected", "backend", name)
	}
	if r.OnPing != nil {
		r.OnPing(name, err == nil, reconnected)
	}
}

// Run checks until ctx ends.
func (r *Readiness) Run(ctx context.Context) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		r.CheckOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Ready reports whether every backend answered within Stale; the reason names those
// that did not, with their last error.
func (r *Readiness) Ready() (bool, string) {
	if r.NeverReady {
		return false, "mode never-ready"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.Now()
	var bad []string
	for _, b := range r.Backends {
		s := r.state[b.Name()]
		switch {
		case s == nil:
			bad = append(bad, b.Name()+": not checked yet")
		case s.lastOK.IsZero():
			bad = append(bad, fmt.Sprintf("%s: never answered: %v", b.Name(), s.lastErr))
		case now.Sub(s.lastOK) > r.Stale:
			bad = append(bad, fmt.Sprintf("%s: no answer for %s: %v", b.Name(), now.Sub(s.lastOK).Round(time.Second), s.lastErr))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return false, strings.Join(bad, "; ")
	}
	return true, "ok"
}
