/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package multicluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/multicluster"
)

// fleetOf builds a fleet of waves of the given contexts.
func fleetOf(maxFailures int, waves ...[]string) *multicluster.Fleet {
	f := &multicluster.Fleet{File: multicluster.File{MaxFailures: maxFailures}}
	for i, w := range waves {
		wave := multicluster.Wave{Name: fmt.Sprintf("w%d", i)}
		for _, c := range w {
			wave.Clusters = append(wave.Clusters, multicluster.Cluster{Context: c})
		}
		f.Waves = append(f.Waves, wave)
	}
	return f
}

func TestRunWaves(t *testing.T) {
	tests := []struct {
		name        string
		fleet       *multicluster.Fleet
		fail        string // contexts that fail, comma-separated
		allWaves    bool
		wantRan     string // contexts whose function ran, in wave order (sorted within a wave)
		wantOutcome string
		wantStopped string
	}{
		{name: "all pass", fleet: fleetOf(0, []string{"a"}, []string{"b", "c"}),
			wantRan: "a|b c", wantOutcome: "a=succeeded b=succeeded c=succeeded"},
		{name: "canary fails: later waves untouched", fleet: fleetOf(0, []string{"a"}, []string{"b", "c"}), fail: "a",
			wantRan: "a", wantOutcome: "a=failed b=not-started c=not-started", wantStopped: "w0"},
		{name: "a failure in a wave lets the wave finish", fleet: fleetOf(0, []string{"a", "b"}, []string{"c"}), fail: "a",
			wantRan: "a b", wantOutcome: "a=failed b=succeeded c=not-started", wantStopped: "w0"},
		{name: "maxFailures allows one", fleet: fleetOf(1, []string{"a"}, []string{"b"}, []string{"c"}), fail: "a,b",
			wantRan: "a|b", wantOutcome: "a=failed b=failed c=not-started", wantStopped: "w1"},
		{name: "a failure in the last wave stops nothing", fleet: fleetOf(0, []string{"a"}, []string{"b"}), fail: "b",
			wantRan: "a|b", wantOutcome: "a=succeeded b=failed"},
		{name: "all waves for a dry run", fleet: fleetOf(0, []string{"a"}, []string{"b"}), fail: "a", allWaves: true,
			wantRan: "a|b", wantOutcome: "a=failed b=succeeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			ran := map[int][]string{}
			var started []int
			var stoppedAt string
			r := &multicluster.Runner[string]{
				AllWaves:    tc.allWaves,
				WaveStarted: func(i int, _ multicluster.Wave) { started = append(started, i) },
				WaveDone: func(i int, w multicluster.Wave, results []multicluster.Result[string], stop bool) {
					if len(results) != len(w.Clusters) || started[len(started)-1] != i {
						t.Errorf("wave %d done with %d results for %d clusters", i, len(results), len(w.Clusters))
					}
					if stop {
						stoppedAt = w.Name
					}
				},
				Do: func(_ context.Context, m multicluster.Member) (string, error) {
					mu.Lock()
					ran[m.WaveIndex] = append(ran[m.WaveIndex], m.Context)
					mu.Unlock()
					if strings.Contains(","+tc.fail+",", ","+m.Context+",") {
						return "", errors.New("boom")
					}
					return "ok", nil
				},
			}
			rep := r.Run(t.Context(), tc.fleet)
			var waves []string
			for i := range started {
				w := ran[started[i]]
				slices.Sort(w)
				waves = append(waves, strings.Join(w, " "))
			}
			if got := strings.Join(waves, "|"); got != tc.wantRan {
				t.Errorf("ran %q, want %q", got, tc.wantRan)
			}
			var outcomes []string
			for _, res := range rep.Results {
				outcomes = append(outcomes, res.Context+"="+string(res.Outcome))
			}
			if got := strings.Join(outcomes, " "); got != tc.wantOutcome {
				t.Errorf("outcomes %q, want %q", got, tc.wantOutcome)
			}
			if stoppedAt != rep.StoppedAt {
				t.Errorf("WaveDone said the fleet stops at %q, the report %q", stoppedAt, rep.StoppedAt)
			}
			if rep.StoppedAt != tc.wantStopped {
				t.Errorf("stopped at %q, want %q", rep.StoppedAt, tc.wantStopped)
			}
			if rep.Success() != (tc.fail == "") {
				t.Errorf("Success() = %t with failures %q", rep.Success(), tc.fail)
			}
		})
	}
}

// TestRunMaxParallel: a wave's clusters run at most maxParallel at once.
func TestRunMaxParallel(t *testing.T) {
	f := fleetOf(0, []string{"a", "b", "c", "d", "e"})
	f.Waves[0].MaxParallel = 2
	var running, peak atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	r := &multicluster.Runner[string]{Do: func(ctx context.Context, _ multicluster.Member) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		// The first two wait until both run, so a limit above 2 would show.
		if n == 2 {
			once.Do(func() { close(release) })
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "", nil
	}}
	rep := r.Run(t.Context(), f)
	if !rep.Success() || peak.Load() != 2 {
		t.Errorf("success %t, peak %d; want true, 2", rep.Success(), peak.Load())
	}
}

// TestRunCancelled: clusters of waves after a cancellation are Cancelled, not run.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	f := fleetOf(0, []string{"a"}, []string{"b"})
	var ranB atomic.Bool
	r := &multicluster.Runner[string]{Do: func(_ context.Context, m multicluster.Member) (string, error) {
		if m.Context == "a" {
			cancel()
			return "", nil
		}
		ranB.Store(true)
		return "", nil
	}}
	rep := r.Run(ctx, f)
	if ranB.Load() || rep.Results[1].Outcome != multicluster.Cancelled {
		t.Errorf("after cancel: b ran %t, outcome %s", ranB.Load(), rep.Results[1].Outcome)
	}
}
