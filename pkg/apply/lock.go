/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// LockedError says another run holds the platform's lock.
type LockedError struct {
	Lease   string
	Holder  string
	Expires time.Time
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another apply or upgrade of this platform is running (lease %s held by %s until %s); wait for it, or for the lease to expire if that run crashed",
		e.Lease, e.Holder, e.Expires.UTC().Format(time.RFC3339))
}

// Lock is a coordination.k8s.io Lease that one run at a time holds on a platform. It
// expires, so a crashed run never leaves the platform stuck: a later run takes an
// expired lease over.
type Lock struct {
	Kube      kubernetes.Interface
	Namespace string
	Name      string
	Holder    string
	TTL       time.Duration
	Now       func() time.Time

	lease *coordinationv1.Lease
}

// DefaultHolder names this process in a lease: host and PID, so two runs never share
// a holder name.
func DefaultHolder() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("kubectl-onto@%s/%d", host, os.Getpid())
}

// LockName is the Lease name of a platform's lock.
func LockName(platform string) string { return "onto-lock-" + platform }

// errNamespaceMissing says the lease cannot be created because its namespace does not
// exist yet (a first install).
var errNamespaceMissing = errors.New("the namespace does not exist")

// Acquire takes the lease or fails at once with a *LockedError; it never waits. It
// tries a create first: on the common path, a platform nobody else is applying, that
// is the only request.
func (l *Lock) Acquire(ctx context.Context) error {
	leases := l.Kube.CoordinationV1().Leases(l.Namespace)
	now := metav1.NewMicroTime(l.Now())
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.Holder),
		LeaseDurationSeconds: ptr.To(int32(l.TTL.Seconds())),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.Name, Namespace: l.Namespace}, Spec: spec}
	created, err := leases.Create(ctx, lease, metav1.CreateOptions{FieldManager: "kubectl-onto"})
	switch {
	case err == nil:
		l.lease = created
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("create lock lease %s/%s: %w: %w", l.Namespace, l.Name, errNamespaceMissing, err)
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	existing, err := leases.Get(ctx, l.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return l.Acquire(ctx) // released in between: try again
	}
	if err != nil {
		return fmt.Errorf("get lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	// A live lease is never taken over, even one with this run's holder name: two runs
	// may share a name, and only an expired lease is safe to take.
	if holder, expires := leaseHolder(existing); holder != "" && l.Now().Before(expires) {
		return &LockedError{Lease: l.Namespace + "/" + l.Name, Holder: holder, Expires: expires}
	}
	existing.Spec = spec
	updated, err := leases.Update(ctx, existing, metav1.UpdateOptions{FieldManager: "kubectl-onto"})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return l.Acquire(ctx)
	}
	if err != nil {
		return fmt.Errorf("take over lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	l.lease = updated
	return nil
}

func leaseHolder(lease *coordinationv1.Lease) (string, time.Time) {
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	renew := lease.Spec.RenewTime
	if renew == nil {
		renew = lease.Spec.AcquireTime
	}
	if renew == nil {
		return holder, time.Time{}
	}
	return holder, renew.Add(time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second)
}

// LostError says this run no longer holds the lease it acquired.
type LostError struct {
	Lease string
	// Holder is who holds the lease now, when known.
	Holder string
	Err    error
}

func (e *LostError) Error() string {
	to := "another run"
	if e.Holder != "" {
		to = e.Holder
	}
	return fmt.Sprintf("lost the lock to %s (lease %s: %v); stopped to leave the platform to it, nothing more was written", to, e.Lease, e.Err)
}

func (e *LostError) Unwrap() error { return e.Err }

// KeepAlive renews the lease every TTL/3 until ctx ends (it then returns nil). It
// returns a *LostError when the lease was taken over or deleted, or could not be
// renewed before it expired, so the caller stops as client-go's leader election does.
func (l *Lock) KeepAlive(ctx context.Context) error {
	t := time.NewTicker(l.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if l.lease == nil {
				return nil
			}
			lease := l.lease.DeepCopy()
			now := metav1.NewMicroTime(l.Now())
			lease.Spec.RenewTime = &now
			updated, err := l.Kube.CoordinationV1().Leases(l.Namespace).Update(ctx, lease, metav1.UpdateOptions{FieldManager: "kubectl-onto"})
			switch {
			case err == nil:
				l.lease = updated
			case ctx.Err() != nil:
				return nil
			case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
				lost := &LostError{Lease: l.Namespace + "/" + l.Name, Err: err}
				if now, gerr := l.Kube.CoordinationV1().Leases(l.Namespace).Get(ctx, l.Name, metav1.GetOptions{}); gerr == nil {
					lost.Holder = ptr.Deref(now.Spec.HolderIdentity, "")
				}
				return lost
			default:
				// A passing API error: retry at the next tick, unless the lease has
				// expired meanwhile and another run may hold it.
				if _, expires := leaseHolder(l.lease); l.Now().After(expires) {
					return &LostError{Lease: l.Namespace + "/" + l.Name, Err: err}
				}
			}
		}
	}
}

// Release deletes the lease if this run still holds it.
func (l *Lock) Release(ctx context.Context) error {
	if l.lease == nil {
		return nil
	}
	// The resourceVersion precondition matters: a takeover updates the lease in place,
	// keeping its UID, and this run must not delete the new holder's lease.
	err := l.Kube.CoordinationV1().Leases(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &l.lease.UID, ResourceVersion: &l.lease.ResourceVersion},
	})
	l.lease = nil
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("release lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	return nil
}
