/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// DesiredOver is Desired of lp applied over live, the installed platform (nil when
// there is none, read by the caller): refused when live cannot become lp
// (CheckTransition), with live's remediations kept (KeepRemediations, whose notes it
// returns). It talks to no cluster.
func (lp *Loaded) DesiredOver(live *v1alpha1.OntoPlatform) (*plan.Desired, []string, error) {
	if err := lp.CheckTransition(live); err != nil {
		return nil, nil, err
	}
	notes := lp.KeepRemediations(live)
	d, err := lp.Desired()
	return d, notes, err
}

// KeepRemediations gives lp the live platform's status.remediations, the memory
// limits the watch raised after OOM kills, so that applying an unchanged file does not
// take them back; none when the platform does not exist (live nil). It returns a note
// for each one the render keeps, naming the spec field to copy it into, and for each
// one the file takes back, saying why.
func (lp *Loaded) KeepRemediations(live *v1alpha1.OntoPlatform) []string {
	if live == nil {
		return nil
	}
	lp.Remediations = live.Status.Remediations
	var notes []string
	kept := map[string]bool{}
	for _, k := range lp.Kept() {
		kept[k.Component+"/"+k.Container] = true
		spec := "spec sets none"
		if k.SpecLimit != "" {
			spec = "spec says " + k.SpecLimit
		}
		notes = append(notes, fmt.Sprintf("%s's memory limit is %s, raised by the watch after an OOM kill (%s): copy it into %s",
			k.Component, k.To, spec, k.SpecPath))
	}
	for _, r := range lp.Remediations {
		if kept[r.Component+"/"+r.Container] {
			continue
		}
		// Said when the file wins below the raise; a file as high needs no word.
		var why string
		q, ok := render.MemoryLimit(lp.Platform, r.Component)
		to, err := resource.ParseQuantity(r.To)
		switch {
		case ok && err == nil && q.Cmp(to) >= 0:
		case !lp.Platform.Spec.Remediation.Memory.Enabled:
			why = "spec.remediation.memory.enabled is false"
		case ok && r.SpecLimit != "" && q.String() != r.SpecLimit:
			why = fmt.Sprintf("the file sets %s where it said %s when the watch raised it", q.String(), r.SpecLimit)
		}
		if why != "" {
			notes = append(notes, fmt.Sprintf("%s's memory limit goes back to the file's, not the %s the watch raised it to: %s", r.Component, r.To, why))
		}
	}
	return notes
}

// UpToDate reports whether live, the installed platform, already runs what lp asks
// after a run that succeeded: the same spec, recorded at its generation, at the spec's
// version, no upgrade in progress. A fleet run only checks such a platform: this is
// how running the same fleet command again resumes after the waves that finished,
// from the state the clusters keep themselves.
func (lp Loaded) UpToDate(live *v1alpha1.OntoPlatform) bool {
	if live == nil || live.DeletionTimestamp != nil {
		return false
	}
	st := live.Status
	return st.Phase == v1alpha1.PhaseRunning && st.ObservedGeneration == live.Generation &&
		st.Version == lp.Platform.Spec.Version && st.Upgrade == nil &&
		equality.Semantic.DeepEqual(live.Spec, lp.Platform.Spec)
}
