/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package rendercache_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/rendercache"
)

// counting is a cache in a fresh directory whose renders are counted.
func counting(t *testing.T) (*rendercache.Cache, *int) {
	t.Helper()
	renders := 0
	return &rendercache.Cache{Dir: filepath.Join(t.TempDir(), "render"), Code: "test build", Renderer: func(p *v1alpha1.OntoPlatform, o render.Options) ([]render.Plane, error) {
		renders++
		return render.Render(p, o)
	}}, &renders
}

// TestHitIsTheRender: what the cache returns is what render returns, object for object
// and value for value (integers as int64), for every example; the second call renders
// nothing.
func TestHitIsTheRender(t *testing.T) {
	for _, example := range []string{"minimal.yaml", "platform.yaml", "tenant.yaml", "external.yaml"} {
		t.Run(example, func(t *testing.T) {
			p := ontotest.Example(t, example, "onto-test")
			opts := render.Options{Release: *ontotest.Release(t, p.Spec.Version)}
			want, err := render.Render(p, opts)
			if err != nil {
				t.Fatal(err)
			}
			c, renders := counting(t)
			miss, err := c.Render(p, opts)
			if err != nil {
				t.Fatal(err)
			}
			hit, err := c.Render(p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if *renders != 1 {
				t.Fatalf("renders = %d after a miss and a hit, want 1", *renders)
			}
			if diff := cmp.Diff(want, miss); diff != "" {
				t.Fatalf("miss differs from render (-render +miss):\n%s", diff)
			}
			if diff := cmp.Diff(want, hit); diff != "" {
				t.Fatalf("hit differs from render (-render +hit):\n%s", diff)
			}
		})
	}
}

// TestEveryInputIsInTheKey: a change of the spec, of the patches, of the memory limits,
// of the platform's metadata or of the build is a miss.
func TestEveryInputIsInTheKey(t *testing.T) {
	p := ontotest.Example(t, "minimal.yaml", "onto-test")
	opts := render.Options{Release: *ontotest.Release(t, p.Spec.Version)}
	c, renders := counting(t)
	if _, err := c.Render(p, opts); err != nil {
		t.Fatal(err)
	}
	changes := map[string]func() (*v1alpha1.OntoPlatform, render.Options, *rendercache.Cache){
		"spec": func() (*v1alpha1.OntoPlatform, render.Options, *rendercache.Cache) {
			q := p.DeepCopy()
			q.Spec.Gateway.Replicas = ptr.To[int32](5)
			return q, opts, c
		},
		"namespace": func() (*v1alpha1.OntoPlatform, render.Options, *rendercache.Cache) {
			q := p.DeepCopy()
			q.Namespace = "elsewhere"
			return q, opts, c
		},
		"patches": func() (*v1alpha1.OntoPlatform, render.Options, *rendercache.Cache) {
			o := opts
			o.Patches = []render.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\nspec:\n  revisionHistoryLimit: 2\n"}}
			return p, o, c
		},
		"memory limits": func() (*v1alpha1.OntoPlatform, render.Options, *rendercache.Cache) {
			o := opts
			o.MemoryLimits = map[string]resource.Quantity{"gateway": resource.MustParse("3Gi")}
			return p, o, c
		},
		"build": func() (*v1alpha1.OntoPlatform, render.Options, *rendercache.Cache) {
			other := *c
			other.Code = "another build"
			return p, opts, &other
		},
	}
	for name, change := range changes {
		before := *renders
		q, o, cache := change()
		if _, err := cache.Render(q, o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *renders != before+1 {
			t.Errorf("a change of the %s was served from the cache", name)
		}
	}
	// And the unchanged inputs still hit.
	before := *renders
	if _, err := c.Render(p, opts); err != nil || *renders != before {
		t.Errorf("unchanged inputs: err %v, renders %d → %d; want a hit", err, before, *renders)
	}
}

// TestBrokenEntriesAreMisses: a corrupt or truncated file is rendered again and
// replaced; a failed render is not stored.
func TestBrokenEntriesAreMisses(t *testing.T) {
	p := ontotest.Example(t, "minimal.yaml", "onto-test")
	opts := render.Options{Release: *ontotest.Release(t, p.Spec.Version)}
	c, renders := counting(t)
	want, err := c.Render(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(c.Dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files = %v, want one", files)
	}
	for _, broken := range []string{"{", `{"planes":[]}`, `{"planes":[{"name":"tenancy","objects":[null]}]}`, "not json"} {
		if err := os.WriteFile(files[0], []byte(broken), 0o600); err != nil {
			t.Fatal(err)
		}
		before := *renders
		got, err := c.Render(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		if *renders != before+1 {
			t.Errorf("entry %q was used", broken)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("render after entry %q differs:\n%s", broken, diff)
		}
	}
	if info, err := os.Stat(files[0]); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("cache file %v mode %v, want 0600", err, info.Mode().Perm())
	}

	failing := &rendercache.Cache{Dir: filepath.Join(t.TempDir(), "render"), Code: "test", Renderer: func(*v1alpha1.OntoPlatform, render.Options) ([]render.Plane, error) {
		return nil, errors.New("render failed")
	}}
	if _, err := failing.Render(p, opts); err == nil {
		t.Fatal("a failed render returned no error")
	}
	if files, _ := filepath.Glob(filepath.Join(failing.Dir, "*")); len(files) != 0 {
		t.Errorf("a failed render left %v", files)
	}
}

// TestPrune keeps MaxEntries renders.
func TestPrune(t *testing.T) {
	p := ontotest.Example(t, "minimal.yaml", "onto-test")
	opts := render.Options{Release: *ontotest.Release(t, p.Spec.Version)}
	c, _ := counting(t)
	c.MaxEntries = 2
	for _, replicas := range []int32{1, 2, 3, 4} {
		q := p.DeepCopy()
		q.Spec.Gateway.Replicas = ptr.To(replicas)
		if _, err := c.Render(q, opts); err != nil {
			t.Fatal(err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(c.Dir, "*")); len(files) != 2 {
		t.Errorf("cache holds %d files, want 2", len(files))
	}

	// A store killed before its rename leaves a temporary file: an old one goes at
	// the next store, a fresh one (a store under way beside) stays.
	old, fresh := filepath.Join(c.Dir, ".render-killed"), filepath.Join(c.Dir, ".render-writing")
	for _, f := range []string{old, fresh} {
		if err := os.WriteFile(f, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	q := p.DeepCopy()
	q.Spec.Gateway.Replicas = ptr.To[int32](5)
	if _, err := c.Render(q, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the temporary file of a killed store is left (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary file was removed: %v", err)
	}
}

// TestBlobs: what Put stores under a key, Get returns in the same build and in no other;
// an unknown key is a miss.
func TestBlobs(t *testing.T) {
	dir := t.TempDir()
	c := &rendercache.Cache{Dir: dir, Code: "build 1"}
	c.Put("document a", []byte(`{"a":1}`))
	if got, ok := c.Get("document a"); !ok || string(got) != `{"a":1}` {
		t.Fatalf("Get after Put = %q, %v; want the stored bytes", got, ok)
	}
	if got, ok := c.Get("document b"); ok {
		t.Fatalf("Get of a key never stored = %q, want a miss", got)
	}
	other := &rendercache.Cache{Dir: dir, Code: "build 2"}
	if got, ok := other.Get("document a"); ok {
		t.Fatalf("another build's Get = %q, want a miss", got)
	}
}
