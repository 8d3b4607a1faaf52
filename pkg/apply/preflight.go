/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"fmt"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// ConflictError is returned before any write when the plan would take something that
// is not this platform's: fields of other field managers (without ForceConflicts),
// objects of another platform (always), objects of no platform (without Adopt).
type ConflictError struct {
	Changes []plan.Change
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	b.WriteString("apply would take over what is not this platform's; nothing was written:")
	kinds := map[plan.ConflictKind]bool{}
	for _, c := range e.Changes {
		for _, cf := range c.Conflicts {
			kinds[cf.Kind] = true
			switch cf.Kind {
			case plan.ConflictInventory:
				fmt.Fprintf(&b, "\n  %s belongs to %s", c.Object, cf.Manager)
			case plan.ConflictUnowned:
				fmt.Fprintf(&b, "\n  %s exists and belongs to no platform", c.Object)
			default:
				fmt.Fprintf(&b, "\n  %s: %s is owned by field manager %q", c.Object, cf.Field, cf.Manager)
			}
		}
	}
	if kinds[plan.ConflictInventory] {
		b.WriteString("\nan object of another platform is never taken over: give this platform its own namespace, or uninstall the other one")
	}
	if kinds[plan.ConflictUnowned] {
		b.WriteString("\nre-run with --adopt to make the existing objects this platform's (they are then updated, and pruned when no longer rendered), or delete them")
	}
	if kinds[plan.ConflictFieldManager] || kinds[""] {
		b.WriteString("\nre-run with --force-conflicts to take the fields over, or remove the other manager's changes")
	}
	return b.String()
}

// Preflight runs the checks of a plan that need no write: the delete guard, the
// version guard and conflicts with other field managers. apply runs it before its first
// write, and apply --dry-run=server too, so a dry run fails where the real run would.
func Preflight(p *plan.Plan, opts Options) error {
	if err := checkUpgrade(p, opts); err != nil {
		return err
	}
	if err := checkVersion(p, opts); err != nil {
		return err
	}
	if opts.MaxDeletes >= 0 && opts.Prune && p.Summary.Delete > opts.MaxDeletes {
		return fmt.Errorf("the plan deletes %d objects, more than --max-deletes=%d; nothing was written (review it with `kubectl onto plan`)", p.Summary.Delete, opts.MaxDeletes)
	}
	var conflicted []plan.Change
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			var blocking []plan.Conflict
			if !opts.Prune {
				// The autoscaler whose field this takes would stay, and take it back.
				blocking = append(blocking, c.TakeOver...)
			}
			for _, cf := range c.Conflicts {
				switch {
				case cf.Kind == plan.ConflictUnowned && opts.Adopt:
				case (cf.Kind == plan.ConflictFieldManager || cf.Kind == "") && opts.ForceConflicts:
				default:
					blocking = append(blocking, cf)
				}
			}
			if len(blocking) > 0 {
				c.Conflicts = blocking
				conflicted = append(conflicted, c)
			}
		}
	}
	if len(conflicted) > 0 {
		return &ConflictError{Changes: conflicted}
	}
	return nil
}
