/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package parallel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/parallel"
)

func TestRunAllParallelLimit(t *testing.T) {
	tests := []struct {
		name      string
		items     int
		parallel  int
		wantLimit int
	}{
		{"two at a time", 9, 2, 2},
		{"four at a time", 10, 4, 4},
		{"one at a time", 5, 1, 1},
		{"zero means one", 5, 0, 1},
		{"more slots than items", 3, 8, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var running, peak atomic.Int32
			// Every item waits until as many as the limit run, so the peak reaches the
			// limit however the scheduler orders them, and any excess would show.
			var mu sync.Mutex
			started := 0
			full := make(chan struct{})
			items := make([]int, tc.items)
			for i := range items {
				items[i] = i
			}
			results := parallel.RunAll(t.Context(), items, tc.parallel, false, func(ctx context.Context, i int) (int, error) {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				mu.Lock()
				started++
				if started == tc.wantLimit {
					close(full)
				}
				mu.Unlock()
				select {
				case <-full:
				case <-time.After(5 * time.Second):
					return 0, errors.New("the limit was never reached")
				}
				time.Sleep(time.Millisecond) // not synchronisation: the call's work, done while the others wait
				return i * 10, nil
			})
			if got := int(peak.Load()); got != tc.wantLimit {
				t.Errorf("peak concurrent calls = %d, want %d", got, tc.wantLimit)
			}
			for i, r := range results {
				if r.Outcome != parallel.Succeeded || r.Err != nil || r.Value != i*10 {
					t.Errorf("result %d = %+v, want succeeded with %d", i, r, i*10)
				}
			}
		})
	}
}

// The results are in the order of the items, not the order the calls finished in.
func TestRunAllResultsInInputOrder(t *testing.T) {
	items := []string{"a/slow", "b/fast", "c/failing", "d/fast"}
	delay := map[string]time.Duration{"a/slow": 30 * time.Millisecond, "b/fast": 0, "c/failing": 10 * time.Millisecond, "d/fast": 0}
	results := parallel.RunAll(t.Context(), items, 4, false, func(_ context.Context, item string) (string, error) {
		time.Sleep(delay[item]) // not synchronisation: the item's work, slow or fast, so calls finish out of order
		if item == "c/failing" {
			return "", fmt.Errorf("%s broke", item)
		}
		return item + " done", nil
	})
	var got []string
	for _, r := range results {
		got = append(got, fmt.Sprintf("%s %v %s", r.Outcome, r.Err, r.Value))
	}
	want := []string{"succeeded <nil> a/slow done", "succeeded <nil> b/fast done", "failed c/failing broke ", "succeeded <nil> d/fast done"}
	if !slices.Equal(got, want) {
		t.Errorf("results = %q, want %q", got, want)
	}
	if idx := parallel.FailedIndexes(results); !slices.Equal(idx, []int{2}) {
		t.Errorf("FailedIndexes = %v, want [2]", idx)
	}
}

// Without fail-fast, a failure stops nothing: every item runs.
func TestRunAllFailureDoesNotStopOthers(t *testing.T) {
	var calls atomic.Int32
	results := parallel.RunAll(t.Context(), []int{0, 1, 2, 3, 4}, 2, false, func(ctx context.Context, i int) (struct{}, error) {
		calls.Add(1)
		if i == 0 {
			return struct{}{}, errors.New("first one fails")
		}
		return struct{}{}, ctx.Err()
	})
	if calls.Load() != 5 {
		t.Errorf("calls = %d, want 5", calls.Load())
	}
	for i, r := range results {
		want := parallel.Succeeded
		if i == 0 {
			want = parallel.Failed
		}
		if r.Outcome != want {
			t.Errorf("result %d: %s, want %s", i, r.Outcome, want)
		}
	}
}

// With fail-fast, the first failure cancels the items running (they see their
// context cancelled and return) and the items waiting never start.
func TestRunAllFailFast(t *testing.T) {
	var started sync.Map
	results := parallel.RunAll(t.Context(), []int{0, 1, 2, 3, 4, 5}, 2, true, func(ctx context.Context, i int) (int, error) {
		started.Store(i, true)
		if i == 1 {
			time.Sleep(10 * time.Millisecond) // not synchronisation: the item works a while, then fails
			return 0, errors.New("item 1 broke")
		}
		// Item 0 runs until cancelled, as an apply waiting for a plane would.
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for plane: %w", ctx.Err())
		case <-time.After(5 * time.Second):
			return i, nil
		}
	})
	want := []parallel.Outcome{parallel.Cancelled, parallel.Failed, parallel.Cancelled, parallel.Cancelled, parallel.Cancelled, parallel.Cancelled}
	for i, r := range results {
		if r.Outcome != want[i] {
			t.Errorf("result %d: %s (%v), want %s", i, r.Outcome, r.Err, want[i])
		}
	}
	// Item 0 returned "context canceled"; its result says the cancellation was fail-fast's.
	if !errors.Is(results[0].Err, parallel.ErrFailFast) || !errors.Is(results[0].Err, context.Canceled) {
		t.Errorf("item 0 cancelled while running: error %v, want ErrFailFast and its own error", results[0].Err)
	}
	for i := 2; i < 6; i++ {
		if _, ok := started.Load(i); ok {
			t.Errorf("item %d started after the failure under fail-fast", i)
		}
		if !errors.Is(results[i].Err, parallel.ErrFailFast) {
			t.Errorf("item %d: error %v, want ErrFailFast", i, results[i].Err)
		}
	}
	if results[1].Err == nil || results[1].Err.Error() != "item 1 broke" {
		t.Errorf("the failed item keeps its own error, got %v", results[1].Err)
	}
}

// The caller's cancellation (Ctrl-C) cancels what runs and starts nothing more.
func TestRunAllParentCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	results := parallel.RunAll(ctx, []int{0, 1, 2}, 1, false, func(ctx context.Context, i int) (int, error) {
		cancel()
		<-ctx.Done()
		return 0, ctx.Err()
	})
	for i, r := range results {
		if r.Outcome != parallel.Cancelled || !errors.Is(r.Err, context.Canceled) {
			t.Errorf("result %d: %s (%v), want cancelled with context.Canceled", i, r.Outcome, r.Err)
		}
	}
}
