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
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// LockedError says another run holds the platform's lock.
type LockedError struct {
	Lease   string
	Holder  string
	Expires time.Time
	// Waited is how long Acquire waited for it (--lock-wait).
	Waited time.Duration
}

func (e *LockedError) Error() string {
	waited := ""
	if e.Waited > 0 {
		waited = fmt.Sprintf(" after waiting %s", e.Waited)
	}
	name := strings.TrimPrefix(e.Lease[strings.LastIndexByte(e.Lease, '/')+1:], "onto-lock-")
	ns := e.Lease[:max(strings.LastIndexByte(e.Lease, '/'), 0)]
	return fmt.Sprintf("another run of this platform holds its lock%s (lease %s, held by %s until %s): wait for it (--lock-wait 5m), or, if that run is dead and the lease will not expire soon enough, break the lock with: kubectl onto unlock %s -n %s",
		waited, e.Lease, e.Holder, e.Expires.UTC().Format(time.RFC3339), name, ns)
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
	// Process is the process taking the lock, recorded on the lease; a later run on
	// the same host takes the lease over at once when that process is gone. The zero
	// value records nothing.
	Process Process
	// Wait is how long Acquire waits for a live lease to be released or to expire;
	// 0 fails at once.
	Wait time.Duration

	lease *coordinationv1.Lease
	// tookOver names the holder of a lease taken over because its process was gone.
	tookOver string
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

// Acquire takes the lease. A live lease makes it fail with a *LockedError, at once or,
// with Wait, once Wait has passed without the lease being released or expiring.
func (l *Lock) Acquire(ctx context.Context) error {
	err := l.acquireOnce(ctx)
	var locked *LockedError
	if l.Wait <= 0 || !errors.As(err, &locked) {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, l.Wait)
	defer cancel()
	// A poll, not a watch: the lease may expire without any event.
	last := locked
	werr := wait.PollUntilContextCancel(wctx, time.Second, false, func(ctx context.Context) (bool, error) {
		err = l.acquireOnce(ctx)
		if errors.As(err, &locked) {
			last = locked
			return false, nil
		}
		if wctx.Err() != nil {
			// The wait ended during this try: its error is the client's ("rate
			// limiter Wait returned an error"), not news about the lock.
			return false, nil
		}
		return true, err
	})
	if ctx.Err() != nil {
		return ctx.Err() // stopped while waiting (Ctrl-C, --timeout)
	}
	if werr != nil && wctx.Err() != nil {
		// Waited --lock-wait for the holder: name it, whatever the last try said.
		last.Waited = l.Wait
		return last
	}
	if werr != nil && err == nil {
		return werr
	}
	return err
}

// acquireOnce takes the lease or fails at once with a *LockedError. It tries a create
// first: on the common path, a platform nobody else is applying, that is the only
// request.
func (l *Lock) acquireOnce(ctx context.Context) error {
	leases := l.Kube.CoordinationV1().Leases(l.Namespace)
	now := metav1.NewMicroTime(l.Now())
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.Holder),
		LeaseDurationSeconds: ptr.To(int32(l.TTL.Seconds())),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.Name, Namespace: l.Namespace}, Spec: spec}
	if l.Process.Host != "" {
		l.Process.annotate(lease)
	}
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
		return l.acquireOnce(ctx) // released in between: try again
	}
	if err != nil {
		return fmt.Errorf("get lock lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	// A live lease is never taken over, even one with this run's holder name: two runs
	// may share a name, and only an expired lease is safe to take.
	holder, expires := leaseHolder(existing)
	if holder != "" && l.Now().Before(expires) {
		if !holderGone(existing, l.Process) {
			return &LockedError{Lease: l.Namespace + "/" + l.Name, Holder: holder, Expires: expires}
		}
		// The holder was a process on this host that no longer runs (killed, crashed):
		// its lease would block every run until it expired, for nothing.
		l.tookOver = holder
	}
	existing.Spec = spec
	if l.Process.Host != "" {
		l.Process.annotate(existing)
	}
	updated, err := leases.Update(ctx, existing, metav1.UpdateOptions{FieldManager: "kubectl-onto"})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		l.tookOver = ""
		return l.acquireOnce(ctx)
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

// Unlock deletes a platform's lock lease whoever holds it, and returns the holder it
// had: the way out when a run died on another machine and its lease is long. The
// holder, if it still runs, loses the lease at its next renewal and stops writing.
func Unlock(ctx context.Context, kube kubernetes.Interface, namespace, platform string) (string, error) {
	leases := kube.CoordinationV1().Leases(namespace)
	lease, err := leases.Get(ctx, LockName(platform), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("platform %s/%s is not locked (no lease %s)", namespace, platform, LockName(platform))
	}
	if err != nil {
		return "", fmt.Errorf("get lock lease %s/%s: %w", namespace, LockName(platform), err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	err = leases.Delete(ctx, lease.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion}})
	if apierrors.IsConflict(err) {
		return holder, fmt.Errorf("the lock of %s/%s changed hands while unlocking; nothing was deleted: run unlock again to see the new holder", namespace, platform)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return holder, fmt.Errorf("delete lock lease %s/%s: %w", namespace, lease.Name, err)
	}
	return holder, nil
}

// LeaseOf returns the holder of a platform's lock and when it expires; "" when it is
// not locked.
func LeaseOf(ctx context.Context, kube kubernetes.Interface, namespace, platform string) (string, time.Time, error) {
	lease, err := kube.CoordinationV1().Leases(namespace).Get(ctx, LockName(platform), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("get lock lease %s/%s: %w", namespace, LockName(platform), err)
	}
	holder, expires := leaseHolder(lease)
	return holder, expires, nil
}

// Lock takes platform name's lease in namespace as opts says (Holder, LockTTL,
// LockWait) and keeps it alive until release is called. The returned context ends if
// the lease is lost to another run, so the holder stops writing: pass it, with
// a Mode that holds the lock (ModeLocked, ModeUpgradeStep), to each Apply of a run that spans several (an upgrade).
func (a *Applier) Lock(ctx context.Context, namespace, name string, opts Options) (context.Context, func(), error) {
	return a.lock(ctx, namespace, name, opts.Holder, opts.LockTTL, opts.LockWait)
}

// lock takes the platform's lease and keeps it alive; release gives it back. The
// returned context ends if the lease is lost to another run, so this one stops writing.
func (a *Applier) lock(ctx context.Context, namespace, name, holder string, ttl, wait time.Duration) (context.Context, func(), error) {
	lock := &Lock{Kube: a.Clients.Kube, Namespace: namespace, Name: LockName(name), Holder: holder, TTL: ttl, Now: a.now, Process: a.Process, Wait: wait}
	if lock.Holder == "" {
		lock.Holder = DefaultHolder()
	}
	if lock.TTL <= 0 {
		lock.TTL = time.Minute
	}
	if err := lock.Acquire(ctx); err != nil {
		return ctx, nil, err
	}
	if lock.tookOver != "" {
		a.emit(Event{Type: EventLockTakenOver, Message: fmt.Sprintf("took over the lock of %s: that process is no longer running on this host", lock.tookOver)})
	}
	runCtx, lost := context.WithCancelCause(ctx)
	keepCtx, stopKeep := context.WithCancel(runCtx)
	keepDone := make(chan struct{})
	go func() {
		defer close(keepDone)
		if err := lock.KeepAlive(keepCtx); err != nil {
			a.logger().Warn("lost the lock", "err", err)
			lost(err)
		}
	}()
	return runCtx, func() {
		stopKeep()
		<-keepDone
		relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := lock.Release(relCtx); err != nil {
			a.logger().Warn("release lock", "err", err)
		}
		lost(nil)
	}, nil
}
