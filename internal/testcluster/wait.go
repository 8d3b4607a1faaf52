package testcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pollInterval is short because everything is local: kwok readies pods within
// milliseconds and the tests mostly wait for controllers.
const pollInterval = 100 * time.Millisecond

// Poll calls cond every 100 ms until it returns true or an error, or timeout
// passes (or ctx ends).
func Poll(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, cond)
}

// Eventually is Poll for a condition that reads something which may fail for a
// moment (a file being written, a request log, an API call): an error from cond
// does not stop it. It calls cond every 100 ms until it returns true, or timeout
// passes (or ctx ends); then the error says so, with cond's last error. True ends
// it even with an error beside it: conditions return what they saw as that error
// ("ports [...]") for the message of a timeout, as the loops it replaced did.
func Eventually(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	return EventuallyEvery(ctx, pollInterval, timeout, cond)
}

// EventuallyEvery is Eventually calling cond every interval: for a condition that
// costs much to evaluate (a whole diagnosis), or that cannot change faster.
func EventuallyEvery(ctx context.Context, interval, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		lastErr = err
		return ok, nil
	})
	switch {
	case err == nil:
		return nil
	case lastErr != nil:
		return fmt.Errorf("not within %s: %w (last error: %w)", timeout, err, lastErr)
	default:
		return fmt.Errorf("not within %s: %w", timeout, err)
	}
}

// errNoLonger stops StaysTrue's poll at the first false.
var errNoLonger = errors.New("no longer holds")

// StaysTrue checks that cond holds for d: it calls cond at once, every 100 ms for
// d and once more when d has passed, and fails at the first call that returns false
// or an error, saying after how long. It is the check that something stays so ("the
// rollout stays stuck", "no second Event is sent"), which a sleep and one look at
// the end would pass even if it changed and changed back in between.
//
// cond gets ctx, not a context that ends with d, so a read in flight when d passes
// is not cancelled into a failure. StaysTrue returns ctx's error if ctx ends first.
func StaysTrue(ctx context.Context, d time.Duration, cond func(context.Context) (bool, error)) error {
	start := time.Now()
	check := func() error {
		ok, err := cond(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("after %s of %s: %w", time.Since(start).Round(time.Millisecond), d, err)
		case !ok:
			return fmt.Errorf("after %s of %s: %w", time.Since(start).Round(time.Millisecond), d, errNoLonger)
		}
		return nil
	}
	var failed error
	err := Poll(ctx, d, func(context.Context) (bool, error) {
		failed = check()
		return false, failed
	})
	switch {
	case failed != nil:
		return failed
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil && !wait.Interrupted(err):
		return err
	}
	return check()
}

// StaysFor reads obj (by its namespace and name) for d, as StaysTrue calls its
// condition, and fails at the first read where cond does not hold, or that fails
// (NotFound included). It returns the last state read, for the failure's message.
func StaysFor[T client.Object](ctx context.Context, c *Cluster, obj T, d time.Duration, cond func(T) (bool, error)) (T, error) {
	key := client.ObjectKeyFromObject(obj)
	err := StaysTrue(ctx, d, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key, obj); err != nil {
			return false, err
		}
		return cond(obj)
	})
	if err != nil {
		return obj, fmt.Errorf("%T %s: %w", obj, key, err)
	}
	return obj, nil
}

// WaitFor reads obj (by its namespace and name) until cond holds and returns
// the last state read. On timeout the error describes that state's kind and
// name; cond may return an error to stop early. A NotFound read counts as "not
// yet", so WaitFor can wait for an object to appear.
func WaitFor[T client.Object](ctx context.Context, c *Cluster, obj T, timeout time.Duration, cond func(T) (bool, error)) (T, error) {
	key := client.ObjectKeyFromObject(obj)
	var lastErr error
	err := Poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key, obj); err != nil {
			lastErr = err
			return false, client.IgnoreNotFound(err)
		}
		lastErr = nil
		return cond(obj)
	})
	if err != nil {
		if lastErr != nil {
			return obj, fmt.Errorf("wait for %T %s: %w (last read: %w)", obj, key, err, lastErr)
		}
		return obj, fmt.Errorf("wait for %T %s: %w", obj, key, err)
	}
	return obj, nil
}

// PodReady reports whether the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// DeploymentComplete reports whether the Deployment's controller has seen the
// latest spec and every replica is updated and available, like `kubectl rollout
// status` succeeding.
func DeploymentComplete(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation &&
		s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}
