/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"reflect"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// TestKeptRenderIsTheRender: the render a watch keeps between passes, compressed,
// decodes to the desired state the render itself gives, object for object (integers
// as int64 included), and takes a small part of its memory.
func TestKeptRenderIsTheRender(t *testing.T) {
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"../../examples/tenant.yaml", "../../examples/platform.yaml"} {
		loaded, err := (&platform.Loader{Validator: v, Catalog: catalog}).LoadOne(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		planes, err := loaded.Render()
		if err != nil {
			t.Fatal(err)
		}
		want, err := plan.NewDesired(loaded.Platform, planes)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := compactRender(loaded.Platform, planes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kept.desired()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the kept render decodes to another desired state", file)
		}
		encoded, err := want.Objects()[0].MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d objects kept in %d bytes (the first object alone is %d bytes of JSON)", file, len(want.Objects()), len(kept.planes), len(encoded))
		if len(kept.planes) > 64<<10 {
			t.Errorf("%s: kept render is %d bytes, want under 64 KiB", file, len(kept.planes))
		}
	}
}
