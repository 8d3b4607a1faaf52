/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Mode is how the service misbehaves on purpose, for the upgrade tests: the image of
// each variant sets ONTO_SAMPLE_MODE in its config, so every variant is the same binary.
//
//	""           behaves
//	crash        exits 1 CrashAfter after it starts
//	never-ready  serves, /healthz 200, /readyz never 200
//	failN        ready, but N % of the requests fail (HTTP 500, gRPC Unavailable)
//	slowNx       ready, every request takes N times as long (the p99 with it)
//	oom          allocates (and touches) memory until the kernel kills it
type Mode struct {
	Name string
	// FailRatio is the share of requests that fail, in [0, 1].
	FailRatio float64 `json:",omitempty"`
	// SlowFactor multiplies each request's latency; 0 or 1 leaves it.
	SlowFactor float64 `json:",omitempty"`
	Crash      bool    `json:",omitempty"`
	NeverReady bool    `json:",omitempty"`
	OOM        bool    `json:",omitempty"`
}

// The constants of the modes: how long a crashing service runs, and how an allocating
// one grows (64 MiB a second: past a 256Mi limit in about 4 s).
const (
	CrashAfter  = 3 * time.Second
	OOMChunk    = 16 << 20
	OOMInterval = 250 * time.Millisecond
	// SlowBase is the least latency slowN adds to: a request that took less counts as
	// having taken this, so a fast /work still becomes measurably slower.
	SlowBase = 20 * time.Millisecond
)

// Modes are the variants the images are built for, by tag suffix.
var Modes = []string{"crash", "never-ready", "fail20", "slow5x", "oom"}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	m := Mode{Name: s}
	switch {
	case s == "" || s == "normal":
		m.Name = ""
	case s == "crash":
		m.Crash = true
	case s == "never-ready":
		m.NeverReady = true
	case s == "oom":
		m.OOM = true
	case strings.HasPrefix(s, "fail"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "fail"))
		if err != nil || n < 0 || n > 100 {
			return Mode{}, fmt.Errorf("mode %q: want failN, N a percentage", s)
		}
		m.FailRatio = float64(n) / 100
	case strings.HasPrefix(s, "slow") && strings.HasSuffix(s, "x"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(s, "slow"), "x"), 64)
		if err != nil || f < 1 {
			return Mode{}, fmt.Errorf("mode %q: want slowNx, N at least 1", s)
		}
		m.SlowFactor = f
	default:
		return Mode{}, fmt.Errorf("mode %q: want crash, never-ready, failN, slowNx or oom", s)
	}
	return m, nil
}

// Fails reports whether a request fails, by the mode's share; r is a number in [0, 1)
// (rand.Float64 in the service, fixed in tests).
func (m Mode) Fails(r float64) bool { return r < m.FailRatio }

// ExtraDelay is what a slow mode adds to a request that took took.
func (m Mode) ExtraDelay(took time.Duration) time.Duration {
	if m.SlowFactor <= 1 {
		return 0
	}
	return time.Duration(float64(max(took, SlowBase)) * (m.SlowFactor - 1))
}

// randFloat is the service's source of the failing share.
func randFloat() float64 { return rand.Float64() }
