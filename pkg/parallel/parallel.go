/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package parallel is a bounded parallel map: it runs one function over many items, a
// few at a time, and returns each item's outcome in the items' order. apply and plan
// of a file or directory holding several platforms, and each wave of a --fleet run
// (pkg/multicluster), use it. It knows nothing of platforms or clusters; the caller's
// function does the work of one item.
//
// Unlike errgroup.Group with SetLimit, every item gets a result of its own (value,
// error, outcome, duration), a failure stops the others only with fail-fast, and the
// items it cancels say why (ErrFailFast as the context's cause).
package parallel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Outcome is how one item's run ended.
type Outcome string

// Outcomes of an item.
const (
	// Succeeded: the function returned no error.
	Succeeded Outcome = "succeeded"
	// Failed: the function returned an error of its own.
	Failed Outcome = "failed"
	// Cancelled: the run was stopped before or while the item ran, by another item's
	// failure under fail-fast or by the caller's context (Ctrl-C).
	Cancelled Outcome = "cancelled"
)

// ErrFailFast is the cause of the cancellation of the items still running or waiting
// when one fails under fail-fast.
var ErrFailFast = errors.New("cancelled: another item failed and fail-fast is on")

// Result is one item's outcome, with what its function returned.
type Result[R any] struct {
	Value    R
	Err      error
	Outcome  Outcome
	Duration time.Duration
}

// RunAll calls fn for each item, at most parallel at a time (1 when lower), and
// returns the results in the order of items, whatever order they finished in. Items
// start in their order. A failure does not stop the others unless failFast: then the
// context of the items running is cancelled with ErrFailFast as its cause (their
// function must return on it, releasing what it holds), and the items not started yet
// never start. Either way, every item has a result.
func RunAll[T, R any](ctx context.Context, items []T, parallel int, failFast bool, fn func(context.Context, T) (R, error)) []Result[R] {
	if parallel < 1 {
		parallel = 1
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([]Result[R], len(items))
	// Slots bound the items running at once: memory grows with parallel, not with
	// the number of items, as long as fn holds what it builds only while it runs.
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, item := range items {
		select {
		case <-ctx.Done():
		case slots <- struct{}{}:
		}
		// A slot and a cancellation can both be ready; a cancelled run starts nothing.
		if ctx.Err() != nil {
			results[i] = Result[R]{Err: context.Cause(ctx), Outcome: Cancelled}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			start := time.Now()
			value, err := fn(ctx, item)
			res := Result[R]{Value: value, Err: err, Outcome: Succeeded, Duration: time.Since(start)}
			switch {
			case err == nil:
			case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(context.Cause(ctx), ErrFailFast)):
				res.Outcome = Cancelled
				// The function saw only "context canceled"; the result says why.
				if cause := context.Cause(ctx); !errors.Is(err, cause) {
					res.Err = fmt.Errorf("%w: %w", cause, err)
				}
			default:
				res.Outcome = Failed
				if failFast {
					cancel(ErrFailFast)
				}
			}
			results[i] = res
		}()
	}
	wg.Wait()
	return results
}

// FailedIndexes returns the indexes of the results that did not succeed (failed or
// cancelled), in order.
func FailedIndexes[R any](results []Result[R]) []int {
	var out []int
	for i, r := range results {
		if r.Outcome != Succeeded {
			out = append(out, i)
		}
	}
	return out
}
