package testcluster

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	errRead := errors.New("file not there yet")
	tests := []struct {
		name string
		// cond answers its nth call (from 1).
		cond    func(n int) (bool, error)
		wantErr string
		// wantCalls is how many calls there were at least.
		wantCalls int
	}{
		{name: "true at once", cond: func(int) (bool, error) { return true, nil }, wantCalls: 1},
		{name: "true on the third call", cond: func(n int) (bool, error) { return n >= 3, nil }, wantCalls: 3},
		{name: "errors do not stop it", cond: func(n int) (bool, error) {
			if n < 3 {
				return false, errRead
			}
			return true, nil
		}, wantCalls: 3},
		{name: "true with an error is done", cond: func(n int) (bool, error) { return n >= 2, errRead }, wantCalls: 2},
		{name: "the last error is told", cond: func(n int) (bool, error) { return false, errRead }, wantErr: "last error: file not there yet"},
		{name: "never", cond: func(int) (bool, error) { return false, nil }, wantErr: "not within 500ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			err := Eventually(t.Context(), 500*time.Millisecond, func(context.Context) (bool, error) {
				return tc.cond(int(calls.Add(1)))
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Eventually: %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Eventually: %v, want an error saying %q", err, tc.wantErr)
			}
			if n := int(calls.Load()); n < tc.wantCalls {
				t.Errorf("cond called %d times, want at least %d", n, tc.wantCalls)
			}
		})
	}
}

func TestStaysTrue(t *testing.T) {
	const d = 500 * time.Millisecond
	errRead := errors.New("read failed")
	tests := []struct {
		name string
		// cond answers its nth call (from 1), made since after start.
		cond    func(n int, since time.Duration) (bool, error)
		wantErr error
		// wantCalls: at least this many calls; maxTook: it returned this soon.
		wantCalls int
		maxTook   time.Duration
	}{
		{name: "holds throughout", cond: func(int, time.Duration) (bool, error) { return true, nil }, wantCalls: 5},
		{name: "false on the second call fails at once", cond: func(n int, _ time.Duration) (bool, error) { return n < 2, nil },
			wantErr: errNoLonger, maxTook: d / 2},
		{name: "false and true again in between still fails", cond: func(n int, _ time.Duration) (bool, error) { return n != 3, nil },
			wantErr: errNoLonger, maxTook: d/2 + 100*time.Millisecond},
		{name: "an error fails", cond: func(n int, _ time.Duration) (bool, error) {
			if n == 2 {
				return true, errRead
			}
			return true, nil
		}, wantErr: errRead, maxTook: d / 2},
		{name: "checked once more when d has passed", cond: func(_ int, since time.Duration) (bool, error) { return since < d, nil },
			wantErr: errNoLonger},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			start := time.Now()
			err := StaysTrue(t.Context(), d, func(context.Context) (bool, error) {
				return tc.cond(int(calls.Add(1)), time.Since(start))
			})
			took := time.Since(start)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("StaysTrue: %v, want nil", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("StaysTrue: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && took < d {
				t.Errorf("StaysTrue returned nil after %s, before %s had passed", took, d)
			}
			if tc.maxTook > 0 && took > tc.maxTook {
				t.Errorf("StaysTrue took %s to fail, want at the first false (within %s)", took, tc.maxTook)
			}
			if n := int(calls.Load()); n < tc.wantCalls {
				t.Errorf("cond called %d times in %s, want at least %d: it must check throughout", n, d, tc.wantCalls)
			}
		})
	}
}

// TestStaysTrueContext: cond's context does not end with d (a read in flight then
// is no failure), and StaysTrue stops with the caller's context.
func TestStaysTrueContext(t *testing.T) {
	t.Parallel()
	if err := StaysTrue(t.Context(), 300*time.Millisecond, func(ctx context.Context) (bool, error) {
		return true, ctx.Err()
	}); err != nil {
		t.Errorf("StaysTrue: %v, want nil: cond's context ended", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := StaysTrue(ctx, time.Minute, func(context.Context) (bool, error) { return true, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("StaysTrue under a context that ends: %v, want its error", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("StaysTrue ran %s after its context ended", took)
	}
}

// TestEventuallyEvery: cond is called at the interval given, not more often.
func TestEventuallyEvery(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	err := EventuallyEvery(t.Context(), 200*time.Millisecond, time.Second, func(context.Context) (bool, error) {
		calls.Add(1)
		return false, nil
	})
	if err == nil {
		t.Fatal("EventuallyEvery of a condition never true: nil, want an error")
	}
	if n := calls.Load(); n < 4 || n > 7 {
		t.Errorf("cond called %d times in 1 s every 200 ms, want about 6", n)
	}
}
