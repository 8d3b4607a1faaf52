/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// listOnly is a ListWatch without the streaming list (a watch that sends the
// initial objects): the reflector lists, then watches.
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// emptyListWatch lists nothing, at once, and then watches a watch that never speaks.
func emptyListWatch() cache.ListerWatcher {
	return listOnly{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			l := &unstructured.UnstructuredList{}
			l.SetResourceVersion("1")
			return l, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}
}

// TestUntilWithSyncChecksThePreconditionWhenTheListIsIn runs both waits in a synctest
// bubble, whose clock moves only when every goroutine is blocked: a precondition met
// by the first list returns after no time at all here, and after the library's 100 ms
// poll there (what an uninstall paid three times a stage).
func TestUntilWithSyncChecksThePreconditionWhenTheListIsIn(t *testing.T) {
	done := func(cache.Store) (bool, error) { return true, nil }
	never := func(watch.Event) (bool, error) { return false, nil }
	for _, tc := range []struct {
		name  string
		until func(context.Context, cache.ListerWatcher, runtime.Object, watchtools.PreconditionFunc, ...watchtools.ConditionFunc) (*watch.Event, error)
		took  time.Duration
	}{
		{"kube.UntilWithSync", UntilWithSync, 0},
		{"watchtools.UntilWithSync", watchtools.UntilWithSync, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				start := time.Now()
				if _, err := tc.until(ctx, emptyListWatch(), &unstructured.Unstructured{}, done, never); err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("the precondition returned after %s of the bubble's clock, want %s", took, tc.took)
				}
			})
		})
	}
}

// TestUntilWithSyncStopsWithItsContext: a wait whose list never comes back returns
// the context's error, and its informer stops.
func TestUntilWithSyncStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := listOnly{&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return watch.NewFake(), nil
			},
		}}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := UntilWithSync(ctx, lw, &unstructured.Unstructured{}, func(cache.Store) (bool, error) { return true, nil })
		if err == nil || ctx.Err() == nil {
			t.Fatalf("err %v, context %v; want the deadline's error", err, ctx.Err())
		}
	})
}
