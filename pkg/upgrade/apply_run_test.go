/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
)

// TestForApply: an apply is an upgrade when the file changes the installed version,
// or asks for the target of a stopped upgrade (which it resumes); otherwise a plain
// apply, which refuses to run during another upgrade.
func TestForApply(t *testing.T) {
	installed := func(version, upgradingTo string) *v1alpha1.OntoPlatform {
		p := &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: "onto", Name: "p"}}
		p.Status.Version = version
		if upgradingTo != "" {
			p.Status.Upgrade = &v1alpha1.UpgradeStatus{From: version, To: upgradingTo}
		}
		return p
	}
	tests := []struct {
		name         string
		live         *v1alpha1.OntoPlatform
		file         string
		wantUpgrade  bool
		wantResuming bool
	}{
		{name: "not installed", live: nil, file: "1.6.0"},
		{name: "never applied", live: installed("", ""), file: "1.6.0"},
		{name: "same version", live: installed("1.5.0", ""), file: "1.5.0"},
		{name: "new version", live: installed("1.5.0", ""), file: "1.6.0", wantUpgrade: true},
		{name: "older version", live: installed("1.6.0", ""), file: "1.5.0", wantUpgrade: true},
		{name: "resumes the stopped upgrade", live: installed("1.5.0", "1.6.0"), file: "1.6.0", wantUpgrade: true, wantResuming: true},
		{name: "installed version during an upgrade", live: installed("1.5.0", "1.6.0"), file: "1.5.0"},
		{name: "a third version during an upgrade", live: installed("1.5.0", "1.6.0"), file: "1.7.0", wantUpgrade: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lp := platform.Loaded{Platform: &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: "onto", Name: "p"}}}
			lp.Platform.Spec.Version = tc.file
			a := apply.NewApplier(nil, nil)
			got := ForApply(a, tc.live, lp, DefaultOptions())
			if (got != nil) != tc.wantUpgrade {
				t.Fatalf("ForApply = %+v, want an upgrade: %v", got, tc.wantUpgrade)
			}
			if got == nil {
				return
			}
			if got.Resuming != tc.wantResuming || got.Installed != tc.live.Status.Version {
				t.Errorf("ForApply = {Installed: %s, Resuming: %v}, want {%s, %v}", got.Installed, got.Resuming, tc.live.Status.Version, tc.wantResuming)
			}
			u := got.Upgrade
			if u.Applier != a || u.Namespace != "onto" || u.Name != "p" || u.Target == nil || u.Target.Spec.Version != tc.file {
				t.Errorf("the upgrade is not the file's on its applier: %+v", u)
			}
		})
	}
}
