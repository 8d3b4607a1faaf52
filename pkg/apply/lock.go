/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"fmt"
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

// LockName is the Lease name of a platform's lock.
func LockName(platform string) string { return "onto-lock-" + platform }

// Acquire takes the lease or fails at once with a *LockedError; it never waits.
func (l *Lock) Acquire(ctx context.Context) error {
	leases := l.Kube.CoordinationV1().Leases(l.Namespace)
	now := metav1.NewMicroTime(l.Now())
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.Holder),
		LeaseDurationSeconds: ptr.To(int32(l.TTL.Seconds())),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
	existing, err := leases.Get(ctx, l.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.Name, Namespace: l.Namespace}, Spec: spec}
		created, err := leases.Create(ctx, lease, metav1.CreateOptions{FieldManager: "kubectl-onto"})
		if apierrors.IsAlreadyExists(err) {
			return l.Acquire(ctx) // someone won the race: report who
		}
		if err != nil {
			return fmt.Errorf("create lock lease %s/%s: %w", l.Namespace, l.Name, err)
		}
		l.lease = created
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	if holder, expires := leaseHolder(existing); holder != "" && holder != l.Holder && l.Now().Before(expires) {
		return &LockedError{Lease: l.Namespace + "/" + l.Name, Holder: holder, Expires: expires}
	}
	existing.Spec = spec
	updated, err := leases.Update(ctx, existing, metav1.UpdateOptions{FieldManager: "kubectl-onto"})
	if apierrors.IsConflict(err) {
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

// KeepAlive renews the lease every TTL/3 until ctx ends, so a long wait keeps the
// lock. It returns when ctx is done.
func (l *Lock) KeepAlive(ctx context.Context) {
	t := time.NewTicker(l.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if l.lease == nil {
				return
			}
			lease := l.lease.DeepCopy()
			now := metav1.NewMicroTime(l.Now())
			lease.Spec.RenewTime = &now
			updated, err := l.Kube.CoordinationV1().Leases(l.Namespace).Update(ctx, lease, metav1.UpdateOptions{FieldManager: "kubectl-onto"})
			if err == nil {
				l.lease = updated
			}
		}
	}
}

// Release deletes the lease if this run still holds it.
func (l *Lock) Release(ctx context.Context) error {
	if l.lease == nil {
		return nil
	}
	err := l.Kube.CoordinationV1().Leases(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &l.lease.UID},
	})
	l.lease = nil
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("release lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	return nil
}
