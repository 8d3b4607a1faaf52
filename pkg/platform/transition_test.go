/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// TestCheckTransitionAtFileLines: a file whose kafka, MinIO and Redis the live platform
// cannot become is refused with each field at its line of the file (the production
// example: mode on line 24, minio.replicas 26, kafka.replicas 29); the same file against
// itself, or with no live platform, passes.
func TestCheckTransitionAtFileLines(t *testing.T) {
	l := newLoader(t)
	lp, err := l.LoadOne(filepath.Join("..", "..", "examples", "platform.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.CheckTransition(nil); err != nil {
		t.Errorf("no live platform: %v", err)
	}
	if err := lp.CheckTransition(lp.Platform.DeepCopy()); err != nil {
		t.Errorf("the live platform is the file's: %v", err)
	}

	live := lp.Platform.DeepCopy()
	live.Spec.Infrastructure.Kafka.Replicas = ptr.To[int32](1)
	live.Spec.Infrastructure.Minio.Replicas = nil
	live.Spec.Infrastructure.Redis.Mode = v1alpha1.RedisStandalone
	err = lp.CheckTransition(live)
	var se *spec.Error
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a *spec.Error", err)
	}
	type at struct {
		Field string
		Line  int
	}
	var got []at
	for _, is := range se.Issues {
		got = append(got, at{is.Field, is.Line})
		if is.Message == "" {
			t.Errorf("%s: no message", is.Field)
		}
	}
	want := []at{
		{"spec.infrastructure.redis.mode", 24},
		{"spec.infrastructure.minio.replicas", 26},
		{"spec.infrastructure.kafka.replicas", 29},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("issues (-want +got):\n%s", diff)
	}
	if se.File != filepath.Join("..", "..", "examples", "platform.yaml") {
		t.Errorf("file %q", se.File)
	}
}
