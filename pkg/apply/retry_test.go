/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("patch: %w", syscall.ECONNREFUSED), true},
		// client-go's words for a response cut short by an API server's death.
		{fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", io.ErrUnexpectedEOF), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewServiceUnavailable("restarting"), true},
		{apierrors.NewInternalError(errors.New("etcdserver: leader changed")), true},
		{apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "gateway", nil), false},
		{apierrors.NewForbidden(gr, "gateway", errors.New("quota")), false},
		{apierrors.NewConflict(gr, "gateway", errors.New("field manager")), false},
		{nil, false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestRetryTransient: a write failing transiently is retried until it succeeds, or
// fails naming the budget once it is spent; other errors are not retried.
func TestRetryTransient(t *testing.T) {
	refused := fmt.Errorf("patch: %w", syscall.ECONNREFUSED)
	calls := 0
	err := retryTransient(t.Context(), 5*time.Second, func() error {
		calls++
		if calls < 3 {
			return refused
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("a write refused twice, then accepted: err %v after %d calls; want success after 3", err, calls)
	}

	calls = 0
	start := time.Now()
	err = retryTransient(t.Context(), time.Second, func() error { calls++; return refused })
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "retry budget, 1s") || calls < 2 || time.Since(start) > 3*time.Second {
		t.Fatalf("a write refused for good: %v after %d calls in %s; want the refusal, naming the 1s budget, after a few retries", err, calls, time.Since(start))
	}

	calls = 0
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "gateway", nil)
	if err := retryTransient(t.Context(), time.Minute, func() error { calls++; return invalid }); !errors.Is(err, invalid) || calls != 1 {
		t.Fatalf("an invalid object: %v after %d calls; want it at once", err, calls)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls = 0
	if err := retryTransient(ctx, time.Minute, func() error { calls++; return refused }); err == nil || calls != 1 {
		t.Fatalf("a cancelled run: %v after %d calls; want the error at once", err, calls)
	}
}
