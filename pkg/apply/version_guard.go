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

// VersionError refuses a change of the installed version that the release does not
// allow: a downgrade, or a jump outside its upgrade path.
type VersionError struct {
	Platform  string
	Installed string
	Target    string
	Err       error
	// Asks says what asked for Target ("--to"); "the file" when empty.
	Asks string
	// Flag is the flag of the command refused that forces it; apply's
	// --force-version when empty (upgrade's is --force).
	Flag string
}

func (e *VersionError) Error() string {
	asks, flag := "the file asks for", "--force-version"
	if e.Asks != "" {
		asks = e.Asks + " asks for"
	}
	if e.Flag != "" {
		flag = e.Flag
	}
	return fmt.Sprintf("platform %s runs version %s and %s %s: %v; nothing was written (%s applies it anyway)",
		e.Platform, e.Installed, asks, e.Target, e.Err, flag)
}

func (e *VersionError) Unwrap() error { return e.Err }

// UpgradeInProgressError refuses a plain apply while an upgrade is in progress or
// stopped: applying a whole version at once would mix the upgrade's components.
type UpgradeInProgressError struct {
	Platform, Name, To string
}

func (e *UpgradeInProgressError) Error() string {
	return fmt.Sprintf("platform %s has an upgrade to %s in progress or stopped; nothing was written. Finish it with `kubectl onto upgrade %s -n %s --to %s`, or undo it with `kubectl onto rollback %s -n %s`",
		e.Platform, e.To, e.Name, nsOf(e.Platform), e.To, e.Name, nsOf(e.Platform))
}

func nsOf(ref string) string {
	ns, _, _ := strings.Cut(ref, "/")
	return ns
}

// checkUpgrade refuses a plain apply during an upgrade; the upgrade's own steps pass.
func checkUpgrade(p *plan.Plan, opts Options) error {
	if p.UpgradeTo == "" || opts.Mode.upgradeStep() {
		return nil
	}
	return &UpgradeInProgressError{Platform: p.Platform.Namespace + "/" + p.Platform.Name, Name: p.Platform.Name, To: p.UpgradeTo}
}

// checkVersion applies the release's upgrade path to the move from the installed
// version to the plan's.
func checkVersion(p *plan.Plan, opts Options) error {
	if opts.Release == nil || opts.ForceVersion || p.InstalledVersion == "" || p.InstalledVersion == p.Version {
		return nil
	}
	if err := opts.Release.CanUpgrade(p.InstalledVersion); err != nil {
		return &VersionError{Platform: p.Platform.Namespace + "/" + p.Platform.Name, Installed: p.InstalledVersion, Target: p.Version, Err: err}
	}
	return nil
}
