/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestDesiredSharesTheCRD: every Desired of a process holds the one decoded CRD (a
// watch of 100 platforms held 100 copies of its 0.5 MB), while CRD() hands out a copy
// a caller may change without changing theirs.
func TestDesiredSharesTheCRD(t *testing.T) {
	newDesired := func(ns string) *Desired {
		p := &v1alpha1.OntoPlatform{}
		p.Name, p.Namespace, p.Spec.Version = "p", ns, "1.5.0"
		d, err := NewDesired(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := newDesired("a"), newDesired("b")
	if a.CRD != b.CRD {
		t.Errorf("two platforms' Desired hold two decoded CRDs")
	}
	own, err := CRD()
	if err != nil {
		t.Fatal(err)
	}
	if own == a.CRD {
		t.Fatalf("CRD() returned the shared object, not a copy")
	}
	own.SetName("changed")
	if a.CRD.GetName() != "ontoplatforms.onto.paas" {
		t.Errorf("changing CRD()'s copy changed the shared CRD: name %q", a.CRD.GetName())
	}
}
