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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Transient reports whether a write failed for a reason that passes by itself: the
// API server unreachable or restarting (connection refused or reset, EOF, a response
// cut short), overloaded (429, 503), timing out, or etcd changing its leader (a 500
// from the API server).
// A rejection of the object itself (invalid, forbidden, conflict) is not.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	switch {
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err), apierrors.IsInternalError(err):
		return true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err), utilnet.IsHTTP2ConnectionLost(err):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// An API server killed mid-response: client-go wraps the body's read error
		// ("unexpected error when reading response body. Please retry."), which
		// IsProbableEOF, comparing err itself, does not see.
		return true
	}
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout()
}

// retryTransient runs write until it succeeds, fails for a reason a retry cannot
// change, or keeps failing transiently for budget after its first failure: an API
// server restart or an etcd leader change of a few seconds does not fail a run. The
// retries back off from 200 ms to 5 s. Every write retried this way is idempotent (a
// server-side apply, a create that tolerates AlreadyExists, a delete that tolerates
// NotFound). A budget of 0 does not retry.
func retryTransient(ctx context.Context, budget time.Duration, write func() error) error {
	err := write()
	if budget <= 0 || !Transient(err) {
		return err
	}
	deadline := time.Now().Add(budget)
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: 5 * time.Second}
	for Transient(err) {
		step := backoff.Step()
		if time.Now().Add(step).After(deadline) {
			return &BudgetSpentError{Budget: budget, Err: err}
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(step):
		}
		err = write()
	}
	return err
}

// BudgetSpentError is a write that kept failing transiently for its whole retry
// budget; Err is its last failure.
type BudgetSpentError struct {
	Budget time.Duration
	Err    error
}

func (e *BudgetSpentError) Error() string {
	return fmt.Sprintf("%v (the API server kept failing for the retry budget, %s)", e.Err, e.Budget)
}

func (e *BudgetSpentError) Unwrap() error { return e.Err }
