/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// ListWatch lists and watches ri, optionally narrowed by a field selector such as
// "metadata.name=x" (empty: everything), for watch-driven waits with
// watchtools.UntilWithSync.
func ListWatch(ri dynamic.ResourceInterface, fieldSelector string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			return ri.Watch(ctx, o)
		},
	}
}
