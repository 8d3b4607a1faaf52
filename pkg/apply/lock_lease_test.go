/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// TestLockLeaseAsClientGo pins the lock to client-go's leader election lease
// (resourcelock.LeaseLock), the library it replaces: a lease this lock writes reads back
// there as the same holder, duration and renewal, and a lease client-go writes is held
// here by its holder until its renewal plus its duration. The fork exists because the
// library's elector is a loop that keeps the lease for as long as a process runs, not
// a lock a command takes, fails fast on, and releases. Create, Get and Update only: no
// server-side apply, so a fake clientset shows it.
func TestLockLeaseAsClientGo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	client := kubefake.NewClientset()
	lock := &Lock{Kube: client, Namespace: "t", Name: LockName("p"), Holder: "kubectl-onto@a/1", TTL: time.Minute, Now: func() time.Time { return now }}
	if err := lock.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	theirs := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "t", Name: LockName("p")}, Client: client.CoordinationV1()}
	rec, _, err := theirs.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rec.HolderIdentity != lock.Holder || rec.LeaseDurationSeconds != 60 || !rec.RenewTime.Time.Equal(now) || !rec.AcquireTime.Time.Equal(now) {
		t.Errorf("client-go reads %+v; want holder %s for 60s, acquired and renewed at %s", rec, lock.Holder, now)
	}

	// A lease client-go's elector holds, renewed at now for 30 s.
	other := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "t", Name: LockName("q")}, Client: client.CoordinationV1()}
	if err := other.Create(t.Context(), resourcelock.LeaderElectionRecord{HolderIdentity: "elector", LeaseDurationSeconds: 30,
		AcquireTime: metav1.NewTime(now), RenewTime: metav1.NewTime(now)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		after time.Duration
		held  bool
	}{
		{"within its duration", 29 * time.Second, true},
		{"after its duration", 31 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mine := &Lock{Kube: client, Namespace: "t", Name: LockName("q"), Holder: "kubectl-onto@a/1", TTL: time.Minute, Now: func() time.Time { return now.Add(tc.after) }}
			err := mine.Acquire(t.Context())
			var locked *LockedError
			switch {
			case tc.held && (!errors.As(err, &locked) || locked.Holder != "elector" || !locked.Expires.Equal(now.Add(30*time.Second))):
				t.Errorf("got %v; want the lease held by elector until %s", err, now.Add(30*time.Second))
			case !tc.held && err != nil:
				t.Errorf("an expired lease was not taken over: %v", err)
			}
		})
	}
}
