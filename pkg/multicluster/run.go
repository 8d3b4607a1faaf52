/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package multicluster

import (
	"context"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/parallel"
)

// Outcome is how one cluster's part of a fleet run ended.
type Outcome string

// Outcomes of a cluster.
const (
	// Succeeded: its function returned no error (which includes a cluster found up to
	// date, whose function did nothing).
	Succeeded Outcome = "succeeded"
	// Failed: its function returned an error.
	Failed Outcome = "failed"
	// Cancelled: the run was interrupted (Ctrl-C, --timeout) before or while it ran.
	Cancelled Outcome = "cancelled"
	// NotStarted: an earlier wave stopped the fleet; nothing was sent to the cluster.
	NotStarted Outcome = "not-started"
)

// Result is one cluster's outcome, with what its function returned.
type Result[R any] struct {
	Member
	Value    R
	Err      error
	Outcome  Outcome
	Duration time.Duration
}

// Report is a fleet run: every cluster's result, in the fleet's order.
type Report[R any] struct {
	Results []Result[R]
	// StoppedAt is the wave whose failures stopped the fleet; empty when every wave
	// ran.
	StoppedAt string
	// Failures counts the clusters that failed.
	Failures int
}

// Success is true when every cluster succeeded.
func (r *Report[R]) Success() bool {
	for _, res := range r.Results {
		if res.Outcome != Succeeded {
			return false
		}
	}
	return true
}

// Runner runs one function per cluster of a fleet, wave by wave.
type Runner[R any] struct {
	// Do is the work on one cluster. It gets the run's context: it must return when
	// the context is done.
	Do func(ctx context.Context, m Member) (R, error)
	// WaveStarted, when set, is called as each wave starts (for progress lines).
	WaveStarted func(index int, w Wave)
	// WaveDone, when set, is called as each wave that ran ends, with its clusters'
	// results and whether the fleet stops there.
	WaveDone func(index int, w Wave, results []Result[R], stop bool)
	// AllWaves runs every wave whatever fails (a dry run plans them all).
	AllWaves bool
}

// Run goes through f's waves in order. The clusters of a wave run side by side, at
// most its maxParallel at once (all when 0), through pkg/parallel's runner; a failure
// does not cancel the wave's other clusters, which finish their run, so no cluster is
// left half-applied by another's failure. When the wave ends with more failed
// clusters in the whole run than f.MaxFailures, the fleet stops: the later waves'
// clusters are NotStarted, and nothing is sent to them. A done ctx stops it too, the
// clusters not run then being Cancelled.
func (r *Runner[R]) Run(ctx context.Context, f *Fleet) *Report[R] {
	rep := &Report[R]{}
	members := f.Clusters()
	byWave := make([][]Member, len(f.Waves))
	for _, m := range members {
		byWave[m.WaveIndex] = append(byWave[m.WaveIndex], m)
	}
	stopped := false
	for i, w := range f.Waves {
		if stopped || ctx.Err() != nil {
			outcome := NotStarted
			if !stopped {
				outcome = Cancelled
			}
			for _, m := range byWave[i] {
				rep.Results = append(rep.Results, Result[R]{Member: m, Outcome: outcome, Err: context.Cause(ctx)})
			}
			continue
		}
		if r.WaveStarted != nil {
			r.WaveStarted(i, w)
		}
		limit := w.MaxParallel
		if limit == 0 {
			limit = len(byWave[i])
		}
		results := parallel.RunAll(ctx, byWave[i], limit, false, r.Do)
		first := len(rep.Results)
		for j, res := range results {
			out := Result[R]{Member: byWave[i][j], Value: res.Value, Err: res.Err, Duration: res.Duration}
			switch res.Outcome {
			case parallel.Succeeded:
				out.Outcome = Succeeded
			case parallel.Cancelled:
				out.Outcome = Cancelled
			default:
				out.Outcome = Failed
				rep.Failures++
			}
			rep.Results = append(rep.Results, out)
		}
		if rep.Failures > f.MaxFailures && !r.AllWaves && i < len(f.Waves)-1 {
			stopped = true
			rep.StoppedAt = w.Name
		}
		if r.WaveDone != nil {
			r.WaveDone(i, w, rep.Results[first:], stopped)
		}
	}
	return rep
}
