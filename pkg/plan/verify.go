/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"
	"reflect"
)

// StalePlanError says a saved plan no longer matches the cluster or the file.
type StalePlanError struct {
	Object ObjectRef
	Reason string
}

func (e *StalePlanError) Error() string {
	return fmt.Sprintf("the saved plan is stale: %s %s; nothing was written: make a new plan and review it", e.Object, e.Reason)
}

// Verify checks that a saved plan is still exactly what applying would do: fresh is a
// plan made now from the same file. Every change must match in action, object, desired
// state and the live object's resourceVersion, so what runs is what was reviewed.
func Verify(saved, fresh *Plan) error {
	if saved.Platform != fresh.Platform {
		return &StalePlanError{Object: saved.Platform, Reason: fmt.Sprintf("is for another platform than the file (%s)", fresh.Platform)}
	}
	if saved.InstalledVersion != fresh.InstalledVersion {
		return &StalePlanError{Object: saved.Platform, Reason: fmt.Sprintf("runs version %q now, planned at %q", fresh.InstalledVersion, saved.InstalledVersion)}
	}
	want := map[ObjectRef]Change{}
	for _, pl := range fresh.Planes {
		for _, c := range pl.Changes {
			want[c.Object] = c
		}
	}
	seen := 0
	for _, pl := range saved.Planes {
		for _, c := range pl.Changes {
			f, ok := want[c.Object]
			switch {
			case !ok:
				return &StalePlanError{Object: c.Object, Reason: "is no longer part of the plan"}
			case f.Action != c.Action:
				return &StalePlanError{Object: c.Object, Reason: fmt.Sprintf("would now be %s, not %s", f.Action, c.Action)}
			case f.ResourceVersion != c.ResourceVersion:
				return &StalePlanError{Object: c.Object, Reason: fmt.Sprintf("changed in the cluster (resourceVersion %s, planned at %s)", f.ResourceVersion, c.ResourceVersion)}
			case (f.Desired == nil) != (c.Desired == nil) || f.Desired != nil && !reflect.DeepEqual(f.Desired.Object, c.Desired.Object):
				return &StalePlanError{Object: c.Object, Reason: "is rendered differently from the file now"}
			case f.UID != c.UID:
				return &StalePlanError{Object: c.Object, Reason: "was replaced in the cluster (another UID)"}
			case !equalConflicts(f.Conflicts, c.Conflicts) || !equalConflicts(f.TakeOver, c.TakeOver):
				return &StalePlanError{Object: c.Object, Reason: "has other conflicts with other owners now"}
			case !reflect.DeepEqual(f.Claims, c.Claims):
				return &StalePlanError{Object: c.Object, Reason: "has other volumes to expand now"}
			}
			seen++
		}
	}
	if seen != len(want) {
		return &StalePlanError{Object: fresh.Platform, Reason: fmt.Sprintf("has %d changes now, the saved plan %d", len(want), seen)}
	}
	return nil
}

// equalConflicts compares conflicts by kind, field and owner (not their messages,
// which hold the API server's wording).
func equalConflicts(a, b []Conflict) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Field != b[i].Field || a[i].Manager != b[i].Manager {
			return false
		}
	}
	return true
}
