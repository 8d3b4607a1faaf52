package testcluster

import (
	"context"
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
