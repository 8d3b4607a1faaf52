/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"
	"reflect"
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

// TestUntilWithSyncAsTheLibrary pins the fork to watchtools.UntilWithSync: over the same
// list and watch, the precondition sees the same store and the conditions the same
// events (the listed objects as Added, then the watch's), so both return the same
// event. Only the wait before the precondition differs.
func TestUntilWithSyncAsTheLibrary(t *testing.T) {
	object := func(phase, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("t")
		u.SetName("a")
		u.SetResourceVersion(rv)
		u.SetLabels(map[string]string{"phase": phase})
		return u
	}
	lw := func() cache.ListerWatcher {
		return listOnly{&cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				l := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*object("pending", "1")}}
				l.SetResourceVersion("1")
				return l, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				w := watch.NewFakeWithChanSize(1, false)
				w.Modify(object("done", "2"))
				return w, nil
			},
		}}
	}
	type result struct {
		stored []string
		seen   []string
		last   string
	}
	run := func(t *testing.T, until func(context.Context, cache.ListerWatcher, runtime.Object, watchtools.PreconditionFunc, ...watchtools.ConditionFunc) (*watch.Event, error)) result {
		var r result
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			pre := func(s cache.Store) (bool, error) {
				r.stored = s.ListKeys()
				return false, nil
			}
			cond := func(ev watch.Event) (bool, error) {
				u := ev.Object.(*unstructured.Unstructured)
				r.seen = append(r.seen, string(ev.Type)+" "+u.GetLabels()["phase"])
				return u.GetLabels()["phase"] == "done", nil
			}
			ev, err := until(ctx, lw(), &unstructured.Unstructured{}, pre, cond)
			if err != nil {
				t.Fatal(err)
			}
			r.last = string(ev.Type) + " " + ev.Object.(*unstructured.Unstructured).GetResourceVersion()
		})
		return r
	}
	want := run(t, watchtools.UntilWithSync)
	got := run(t, UntilWithSync)
	if want.last == "" || len(want.seen) == 0 || len(want.stored) == 0 {
		t.Fatalf("the library's wait saw nothing: %+v", want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kube.UntilWithSync: %+v\nwatchtools.UntilWithSync: %+v", got, want)
	}
}
