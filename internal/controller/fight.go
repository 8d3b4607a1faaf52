/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// A field another manager sets again after the watch took it back fightLimit times
// within fightWindow is a fight: a controller, a person or a GitOps tool wants it
// otherwise. Repairing on would flap the object for ever, so the watch stops repairing
// that object and says why (Degraded, reason DriftFight) until the window passes.
const (
	fightLimit  = 3
	fightWindow = 10 * time.Minute
)

// ReasonDriftFight is the Degraded reason of a platform with an object in a fight.
const ReasonDriftFight = "DriftFight"

// fightKey is one field of one object taken back from one manager.
type fightKey struct {
	platform, object, field, manager string
}

// fights remembers when the watch took fields back from other managers.
type fights struct {
	mu       sync.Mutex
	takeBack map[fightKey][]time.Time
}

// record notes the fields the plan took back from other managers at now, for the
// objects applied (by kube.Ref: "Kind namespace/name").
func (f *fights) record(platform string, p *plan.Plan, applied map[string]bool, now time.Time) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.takeBack == nil {
		f.takeBack = map[fightKey][]time.Time{}
	}
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			if c.Action != plan.ActionUpdate || !applied[c.Object.String()] {
				continue
			}
			for _, conflict := range c.Conflicts {
				k := fightKey{platform: platform, object: objectKey(c.Object.Kind, c.Object.Name), field: conflict.Field, manager: conflict.Manager}
				f.takeBack[k] = append(f.takeBack[k], now)
			}
		}
	}
}

// fighting returns the objects of platform in a fight at now, each with the manager
// and field, and forgets take-backs older than the window.
func (f *fights) fighting(platform string, now time.Time) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, times := range f.takeBack {
		recent := times[:0]
		for _, t := range times {
			if now.Sub(t) < fightWindow {
				recent = append(recent, t)
			}
		}
		if len(recent) == 0 {
			delete(f.takeBack, k)
			continue
		}
		f.takeBack[k] = recent
		if k.platform == platform && len(recent) >= fightLimit {
			out[k.object] = fmt.Sprintf("%s of %s, set by %s %d times in %s", k.field, k.object, k.manager, len(recent), fightWindow)
		}
	}
	return out
}

// fightMessage is the Degraded message for the objects in a fight.
func fightMessage(fighting map[string]string) string {
	var parts []string
	for _, why := range fighting {
		parts = append(parts, why)
	}
	sort.Strings(parts)
	return "not repaired, another manager keeps changing it: " + strings.Join(parts, "; ")
}

// objectKey is how fights name an object: Kind/name (a platform's objects share its
// namespace).
func objectKey(kind, name string) string { return kind + "/" + name }
