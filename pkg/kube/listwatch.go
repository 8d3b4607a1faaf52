/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"
)

// ListWatch lists and watches ri, optionally narrowed by a field selector such as
// "metadata.name=x" (empty: everything), for watch-driven waits with
// watchtools.UntilWithSync.
func ListWatch(ri dynamic.ResourceInterface, fieldSelector string) *cache.ListWatch {
	return listWatch(ri.List, ri.Watch, fieldSelector)
}

// MetadataListWatch is ListWatch of ri's metadata alone.
func MetadataListWatch(ri metadata.ResourceInterface, fieldSelector string) *cache.ListWatch {
	return listWatch(ri.List, ri.Watch, fieldSelector)
}

func listWatch[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error), watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), fieldSelector string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			return watchFn(ctx, o)
		},
	}
}

// UntilWithSync is watchtools.UntilWithSync without its wait for the cache: that one
// polls the informer every 100 ms (cache.WaitForCacheSync), so a precondition is
// never checked sooner than 100 ms after the start, even when the list came back in
// 5. Here the informer's synced channel (cache.WaitFor) starts the precondition as
// the list is in; an uninstall runs several such waits one after another.
func UntilWithSync(ctx context.Context, lw cache.ListerWatcher, objType runtime.Object, precondition watchtools.PreconditionFunc, conditions ...watchtools.ConditionFunc) (*watch.Event, error) {
	indexer, informer, watcher, done := watchtools.NewIndexerInformerWatcherWithLogger(klog.FromContext(ctx), lw, objType)
	// The informer stops with the watcher; wait for it, as the library's does.
	defer func() { <-done }()
	defer watcher.Stop()
	if precondition != nil {
		if !cache.WaitFor(ctx, "", informer.HasSyncedChecker()) {
			return nil, fmt.Errorf("list before the watch: %w", ctx.Err())
		}
		ok, err := precondition(indexer)
		if err != nil || ok {
			return nil, err
		}
	}
	return watchtools.UntilWithoutRetry(ctx, watcher, conditions...)
}
