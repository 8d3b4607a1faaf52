/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package upgrade moves an installed platform from one revision to another component
// by component, in plane order, each behind a health gate: a Deployment gets a canary
// (one pod of the new version beside the old ones) that must become ready and stay
// healthy for a soak time before the Deployment rolls; a StatefulSet updates its top
// ordinal first (partition) and soaks it. A component that fails returns to its old
// objects by itself; the ones before it stay moved (or all return with Atomic).
// Progress is kept in the OntoPlatform's status.upgrade, so a stopped run resumes.
// Rollback is the same procedure towards an older revision's snapshot.
//
// Every step is an apply.Applier run of a mixed desired state: the target's objects
// for the components moved so far, the start revision's for the rest, under one lock.
// Nothing is pruned until the end, because old pods and a rollback need the old
// (hash-named) ConfigMaps.
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// Target is what an upgrade moves to: a spec (spec.patches included) and the release
// entry of its version, and one-off patches for this run.
type Target struct {
	Spec    v1alpha1.OntoPlatformSpec
	Release release.Release
	Patches []render.Patch
	// Revision is the revision whose snapshot this target is (rollback); 0 for a new
	// version.
	Revision int64
}

// Options tune an upgrade.
type Options struct {
	// Apply are the options of every step (timeouts, lock, conflicts). Action,
	// Release, Prune and Mode are set per step.
	Apply apply.Options
	// CanaryTimeout bounds the wait for a canary (or a StatefulSet's first updated
	// pod) to become ready.
	CanaryTimeout time.Duration
	// CanarySoak is how long a ready canary must stay ready, without restarts or pod
	// problems, before its component rolls.
	CanarySoak time.Duration
	// Atomic returns every component this run moved when one fails.
	Atomic bool
	// MaxComponents, when positive, ends the run after it moved that many
	// components, the upgrade recorded as in progress (Result.Paused): the next run
	// with the same target goes on. The watch moves one component per pass, so no
	// worker is held for a whole upgrade.
	MaxComponents int
	// Driver is recorded as status.upgrade.driver: "watch" for the watch's runs.
	Driver string
	// Force allows a downgrade or a version off the release's upgrade path.
	Force bool
	// ForceFlag names the flag that sets Force in the command that runs the upgrade,
	// for its refusals: upgrade's --force when empty (apply's is --force-version).
	ForceFlag string
	// Action is recorded in status and history: upgrade or rollback.
	Action string
	// Direct moves to a target that is a recorded revision (a rollback) without
	// canaries: every component at once, plane by plane, waiting for each plane's
	// health. The undo of a stopped upgrade never is direct: it returns only what
	// that upgrade moved, newest first.
	Direct bool
}

// DefaultOptions are upgrade's flags' defaults.
func DefaultOptions() Options {
	o := apply.DefaultOptions()
	o.Action = "upgrade"
	return Options{Apply: o, CanaryTimeout: 5 * time.Minute, CanarySoak: 30 * time.Second, Action: "upgrade"}
}

// Upgrade moves one installed platform to Target.
type Upgrade struct {
	Clients *kube.Clients
	// Applier writes every step; its Observer hears the progress.
	Applier   *apply.Applier
	Namespace string
	Name      string
	// Target is what to move to, from a file (upgrade -f). When nil, ToVersion (with
	// Catalog's entry) applied to the start revision's spec is, or for a rollback the
	// snapshot of ToRevision (0: the Succeeded revision before the newest).
	Target     *Target
	ToVersion  string
	Catalog    *release.Catalog
	ToRevision int64
	Options    Options
	// Reverse walks the components in reverse plane order (rollback: the services go
	// back before the backing services they use).
	Reverse bool
}

// New returns the upgrade of platform namespace/name that a writes, on a's clients:
// the one way the CLI (apply, upgrade, rollback, their --fleet) and the watch build
// one. Say what it moves to with Target (or ForLoaded), ToVersion and Catalog, or
// ToRevision and Reverse.
func New(a *apply.Applier, namespace, name string, opts Options) *Upgrade {
	return &Upgrade{Clients: a.Clients, Applier: a, Namespace: namespace, Name: name, Options: opts}
}

// ForLoaded returns the upgrade of lp's platform to lp: its spec (spec.patches
// included), the release entry of its version and its one-off patches.
func ForLoaded(a *apply.Applier, lp platform.Loaded, opts Options) *Upgrade {
	u := New(a, lp.Platform.Namespace, lp.Platform.Name, opts)
	u.Target = &Target{Spec: lp.Platform.Spec, Release: lp.Release, Patches: lp.Patches}
	return u
}

// Result is what a finished upgrade did.
type Result struct {
	From, To string
	// Steps are the components in the order they moved.
	Steps []string
	// Status is the platform's status at the end.
	Status *v1alpha1.OntoPlatformStatus
	// Paused: the run moved Options.MaxComponents components and stopped, the
	// upgrade still in progress; Remaining components are left.
	Paused    bool
	Remaining int
}

// ComponentError says which component failed, and what became of it.
type ComponentError struct {
	Component string
	// RolledBack is true when the component returned to its old objects.
	RolledBack bool
	Err        error
	// Kept are the components not returned because their migration is not backward
	// compatible, each with why.
	Kept []string
}

func (e *ComponentError) Error() string {
	what := "it was returned to its previous version"
	switch {
	case len(e.Kept) > 0:
		what = "not returned to the previous version: " + strings.Join(e.Kept, ", ") +
			"; the way out is forward (a fixed release: the same upgrade with a fixed --releases entry) or a restore of its data"
	case !e.RolledBack:
		what = "it could not be returned to its previous version: see status"
	}
	return fmt.Sprintf("component %s failed: %v; %s", e.Component, e.Err, what)
}

func (e *ComponentError) Unwrap() error { return e.Err }

// start is what a run knows before its first write.
type start struct {
	live     *v1alpha1.OntoPlatform
	from     *apply.Snapshot
	fromRev  int64
	resuming bool
	done     []string
	target   *Target
	// undo: a rollback of a stopped upgrade, returning its moved components; target
	// is then that upgrade's target, which they leave.
	undo bool
}

// Run moves the platform, component by component, and records the outcome.
func (u *Upgrade) Run(ctx context.Context) (*Result, error) {
	// The lock first (waiting --lock-wait for a live holder): what begin reads of a
	// run in progress is then a run that stopped, not one that is running.
	opts := u.Options.Apply
	lockCtx, unlock, err := u.Applier.Lock(ctx, u.Namespace, u.Name, opts)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ctx = lockCtx
	st, err := u.begin(ctx)
	if err != nil {
		return nil, err
	}
	fromD, err := u.desired(st, st.from.Platform(u.Name, u.Namespace), st.from.Release, nil)
	if err != nil {
		return nil, fmt.Errorf("render revision %d (%s): %w", st.fromRev, st.from.Spec.Version, err)
	}
	toD, err := u.targetDesired(st)
	if err != nil {
		return nil, err
	}

	r := &run{u: u, from: fromD, to: toD, st: st, target: st.target, steps: Steps(toD, fromD, componentOrder(st), u.Reverse)}
	return r.execute(ctx)
}

// InstalledVersion is the version platform name in namespace runs (status.version)
// and the target of its upgrade in progress or stopped; "" when it is not installed.
func InstalledVersion(ctx context.Context, clients *kube.Clients, namespace, name string) (installed, upgradingTo string, err error) {
	u := &Upgrade{Clients: clients, Namespace: namespace, Name: name}
	p, err := u.getPlatform(ctx)
	var notFound *inventory.NotFoundError
	if errors.As(err, &notFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	if p.Status.Upgrade != nil {
		upgradingTo = p.Status.Upgrade.To
	}
	return p.Status.Version, upgradingTo, nil
}

// PlatformName is the name of the only platform of the namespace.
func (u *Upgrade) PlatformName(ctx context.Context) (string, error) {
	l := &inventory.Lister{Dynamic: u.Clients.Dynamic, Mapper: u.Clients.Mapper}
	obj, err := l.Parent(ctx, u.Namespace, u.Name)
	if err != nil {
		return "", err
	}
	return obj.GetName(), nil
}

// Preview is what a run would do: its components in order and the plan of the target
// against the cluster. Making it writes nothing (the plan is a server-side dry run).
type Preview struct {
	Action   string   `json:"action"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Resuming bool     `json:"resuming,omitempty"`
	Steps    []string `json:"steps"`
	// Direct: the target is applied plane by plane without canaries (Options.Direct).
	Direct bool       `json:"direct,omitempty"`
	Plan   *plan.Plan `json:"plan"`
}

// Preview checks what Run would check and says what it would do, writing nothing.
func (u *Upgrade) Preview(ctx context.Context) (*Preview, error) {
	st, err := u.begin(ctx)
	if err != nil {
		return nil, err
	}
	fromD, err := u.desired(st, st.from.Platform(u.Name, u.Namespace), st.from.Release, nil)
	if err != nil {
		return nil, err
	}
	toD, err := u.targetDesired(st)
	if err != nil {
		return nil, err
	}
	final := toD
	if st.undo {
		final = fromD
	}
	p, err := (&plan.Planner{Clients: u.Clients}).Plan(ctx, final)
	if err != nil {
		return nil, err
	}
	pv := &Preview{Action: u.Options.Action, From: st.from.Spec.Version, To: st.target.Spec.Version, Resuming: st.resuming, Steps: Steps(toD, fromD, componentOrder(st), u.Reverse || st.undo), Plan: p}
	pv.Direct = u.Options.Direct && !st.undo && st.target.Revision > 0
	if st.undo {
		pv.From, pv.To = pv.To, pv.From
		// Only what the stopped upgrade moved goes back, newest first, and the
		// component it stopped at, which may be half moved.
		pv.Steps = slices.DeleteFunc(Steps(toD, fromD, componentOrder(st), false), func(c string) bool { return !slices.Contains(st.done, c) })
		slices.Reverse(pv.Steps)
		if up := st.live.Status.Upgrade; up != nil && up.Current != "" && !slices.Contains(pv.Steps, up.Current) {
			pv.Steps = append([]string{up.Current}, pv.Steps...)
		}
	}
	return pv, nil
}

// targetDesired renders the target of st under the platform's name. Like a snapshot's
// platform, it carries no labels or annotations of the file (a snapshot keeps the spec).
func (u *Upgrade) targetDesired(st *start) (*plan.Desired, error) {
	tp := &v1alpha1.OntoPlatform{Spec: *st.target.Spec.DeepCopy()}
	tp.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	tp.Name, tp.Namespace = u.Name, u.Namespace
	d, err := u.desired(st, tp, st.target.Release, st.target.Patches)
	if err != nil {
		return nil, fmt.Errorf("render version %s: %w", st.target.Spec.Version, err)
	}
	return d, nil
}

// desired renders platform p with rel and patches into what applying it writes. The
// memory limits the watch raised (the live status.remediations) are kept on both
// sides: an upgrade must not put back a limit a container was OOM-killed at.
func (u *Upgrade) desired(st *start, p *v1alpha1.OntoPlatform, rel release.Release, patches []render.Patch) (*plan.Desired, error) {
	return platform.Loaded{Platform: p, Release: rel, Patches: patches, Remediations: st.live.Status.Remediations}.Desired()
}

// begin reads the live platform and the revision to start from, and refuses what the
// upgrade must not do, before anything is written.
func (u *Upgrade) begin(ctx context.Context) (*start, error) {
	live, err := u.getPlatform(ctx)
	if err != nil {
		return nil, err
	}
	st := &start{live: live}
	up := live.Status.Upgrade
	if up != nil {
		st.resuming, st.fromRev, st.done = true, up.FromRevision, slices.Clone(up.Done)
	} else if st.fromRev = apply.LatestSnapshot(live.Status.History, 0); st.fromRev == 0 {
		return nil, fmt.Errorf("%s/%s has no recorded revision with a snapshot to %s from: run kubectl onto apply first", u.Namespace, u.Name, u.Options.Action)
	}
	if st.from, err = u.Applier.LoadRevision(ctx, u.Namespace, u.Name, st.fromRev); err != nil {
		return nil, err
	}
	if up != nil && up.Action != "rollback" && u.Options.Action == "rollback" && u.ToRevision == 0 {
		// Undo a stopped upgrade: its moved components go back to where it started.
		target, err := u.storedTarget(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("undo the upgrade to %s: %w", up.To, err)
		}
		if !u.Options.Force {
			// The Jobs say what ran: the release entry that declared them may have come
			// from a --releases directory this run does not have.
			crossed, err := u.irreversibleJobs(ctx, up.To)
			if err != nil {
				return nil, err
			}
			if len(crossed) > 0 {
				return nil, fmt.Errorf("undoing the upgrade of %s/%s to %s would return components across migrations that are not backward compatible (%s): their data would stay migrated; go forward with a fixed release, or restore the data first and pass --force",
					u.Namespace, u.Name, up.To, strings.Join(crossed, ", "))
			}
		}
		st.undo, st.target = true, target
		return st, nil
	}
	if st.target, err = u.resolveTarget(ctx, st); err != nil {
		return nil, err
	}
	to := st.target.Spec.Version
	if up != nil && (up.To != to || (up.Action != "" && up.Action != u.Options.Action)) {
		finish := fmt.Sprintf("kubectl onto upgrade %s -n %s --to %s", u.Name, u.Namespace, up.To)
		if up.Action == "rollback" {
			finish = fmt.Sprintf("kubectl onto rollback %s -n %s", u.Name, u.Namespace)
		}
		if up.Driver == v1alpha1.UpgradeDriverWatch && up.FailedComponent == "" {
			return nil, fmt.Errorf("%s/%s is being upgraded to %s by the watch, one component per pass (%d done); wait for it (kubectl onto status %s -n %s --wait), or undo it (kubectl onto rollback %s -n %s) first",
				u.Namespace, u.Name, up.To, len(up.Done), u.Name, u.Namespace, u.Name, u.Namespace)
		}
		return nil, fmt.Errorf("%s/%s has a stopped %s to %s (at %s; no run holds its lock); finish it (%s) or undo it (kubectl onto rollback %s -n %s) first",
			u.Namespace, u.Name, orDefault(up.Action, "upgrade"), up.To, orDefault(up.Current, "its start"), finish, u.Name, u.Namespace)
	}
	installed := st.from.Spec.Version
	if !st.resuming && u.Options.Action == "rollback" && !u.Options.Force {
		if crossed := IrreversibleMigrations(st.from.Release, st.target.Spec.Version); len(crossed) > 0 {
			return nil, fmt.Errorf("rolling %s/%s back from %s to %s crosses migrations that are not backward compatible (%s): the objects would go back, their data would not; restore the data first, then pass --force",
				u.Namespace, u.Name, installed, st.target.Spec.Version, strings.Join(crossed, ", "))
		}
	}
	if !st.resuming && u.Options.Action == "upgrade" {
		if installed == to {
			return nil, &NothingToDoError{Platform: u.Namespace + "/" + u.Name, Version: to}
		}
		if !u.Options.Force {
			asks := "--to"
			if u.Target != nil {
				asks = "the file"
			}
			if err := st.target.Release.CanUpgrade(installed); err != nil {
				return nil, &apply.VersionError{Platform: u.Namespace + "/" + u.Name, Installed: installed, Target: to, Err: err, Asks: asks, Flag: orDefault(u.Options.ForceFlag, "--force")}
			}
		}
	}
	return st, nil
}

// irreversibleJobs lists the components whose migration Job to version completed and
// is marked not backward compatible.
func (u *Upgrade) irreversibleJobs(ctx context.Context, version string) ([]string, error) {
	jobs, err := u.Clients.Kube.BatchV1().Jobs(u.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelMigration + "=" + version})
	if err != nil {
		return nil, fmt.Errorf("list migration Jobs: %w", err)
	}
	var out []string
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if j.Annotations[AnnotationBackwardCompatible] == "false" && jobDone(j) == "Complete" {
			out = append(out, fmt.Sprintf("%s (release %s)", j.Labels[v1alpha1.LabelName], version))
		}
	}
	return out, nil
}

// IrreversibleMigrations lists the components whose migration in release installed
// is not backward compatible, when moving to another version (target) would leave
// their data behind: "component (release VERSION)".
func IrreversibleMigrations(installed release.Release, target string) []string {
	if target == installed.Version {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(installed.Components)) {
		if m := installed.Components[name].Migration; m != nil && !m.BackwardCompatible {
			out = append(out, fmt.Sprintf("%s (release %s)", name, installed.Version))
		}
	}
	return out
}

// NothingToDoError says the platform already runs the target version.
type NothingToDoError struct {
	Platform, Version string
}

func (e *NothingToDoError) Error() string {
	return fmt.Sprintf("%s already runs version %s: nothing to upgrade (kubectl onto apply -f changes other fields)", e.Platform, e.Version)
}

// resolveTarget is the Target, or the one ToVersion or ToRevision names.
func (u *Upgrade) resolveTarget(ctx context.Context, st *start) (*Target, error) {
	up := st.live.Status.Upgrade
	switch {
	case u.Target != nil:
		return u.Target, nil
	case up != nil && up.Target != "" && up.Action == u.Options.Action && u.Options.Action != "rollback" && (u.ToVersion == "" || u.ToVersion == up.To):
		// Resume the stopped run towards what it recorded, with or without the
		// --releases directory it started from.
		return u.storedTarget(ctx, st)
	case u.Options.Action == "rollback":
		n := u.ToRevision
		if n == 0 {
			if up := st.live.Status.Upgrade; up != nil && up.Action == "rollback" {
				n = apply.LatestSnapshot(st.live.Status.History, up.FromRevision)
				for _, h := range st.live.Status.History {
					if h.Version == up.To && h.Snapshot != "" && h.Result == v1alpha1.RevisionSucceeded && h.Revision < up.FromRevision {
						n = h.Revision
					}
				}
			} else {
				n = apply.LatestSnapshot(st.live.Status.History, st.fromRev)
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s/%s has no earlier Succeeded revision with a snapshot to roll back to (kubectl onto history lists them)", u.Namespace, u.Name)
		}
		snap, err := u.Applier.LoadRevision(ctx, u.Namespace, u.Name, n)
		if err != nil {
			return nil, err
		}
		return &Target{Spec: snap.Spec, Release: snap.Release, Revision: n}, nil
	default:
		if u.ToVersion == "" {
			return nil, errors.New("no target version: pass --to VERSION or -f FILE")
		}
		rel, err := u.Catalog.Get(u.ToVersion)
		if err != nil {
			return nil, fmt.Errorf("--to %s: %w", u.ToVersion, err)
		}
		spec := *st.from.Spec.DeepCopy()
		spec.Version = u.ToVersion
		return &Target{Spec: spec, Release: rel}, nil
	}
}

// storedTarget is the target of the stopped upgrade in st: the snapshot it recorded
// as it started, else (an upgrade started by an older release of this tool) its
// version's catalog entry applied to the spec it started from.
func (u *Upgrade) storedTarget(ctx context.Context, st *start) (*Target, error) {
	up := st.live.Status.Upgrade
	if up.Target != "" {
		snap, err := u.Applier.LoadTarget(ctx, u.Namespace, u.Name)
		if err != nil {
			return nil, err
		}
		return &Target{Spec: snap.Spec, Release: snap.Release}, nil
	}
	rel, err := u.Catalog.Get(up.To)
	if err != nil {
		return nil, err
	}
	spec := *st.from.Spec.DeepCopy()
	spec.Version = up.To
	return &Target{Spec: spec, Release: rel}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (u *Upgrade) getPlatform(ctx context.Context) (*v1alpha1.OntoPlatform, error) {
	l := &inventory.Lister{Dynamic: u.Clients.Dynamic, Mapper: u.Clients.Mapper}
	obj, err := l.Parent(ctx, u.Namespace, u.Name)
	if err != nil {
		return nil, err
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &p); err != nil {
		return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", u.Namespace, u.Name, err)
	}
	return &p, nil
}

// updateStatus changes the stored status with change, retrying on conflicts.
func (u *Upgrade) updateStatus(ctx context.Context, change func(*v1alpha1.OntoPlatformStatus)) (*v1alpha1.OntoPlatformStatus, error) {
	var out *v1alpha1.OntoPlatformStatus
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := u.getPlatform(ctx)
		if err != nil {
			return err
		}
		change(&p.Status)
		now := time.Now()
		if u.Applier.Now != nil {
			now = u.Applier.Now()
		}
		// The stored spec is the generation this run works on until its final apply
		// stores the target's.
		p.Status.SyncConditions(p.Generation, metav1.NewTime(now))
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			return err
		}
		ri, err := u.Clients.Resource(&unstructured.Unstructured{Object: obj})
		if err != nil {
			return err
		}
		_, err = ri.UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{FieldManager: plan.FieldManager})
		out = &p.Status
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record the %s in %s/%s's status: %w", u.Options.Action, u.Namespace, u.Name, err)
	}
	return out, nil
}

// setCondition sets one condition of st at now.
func setCondition(st *v1alpha1.OntoPlatformStatus, typ string, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(now)})
}

// ignoreNotFound is err unless it says the object is gone.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// componentOrder is the spec's component order, the target's then the start's.
func componentOrder(st *start) []string {
	var out []string
	for _, spec := range []*v1alpha1.OntoPlatformSpec{&st.target.Spec, &st.from.Spec} {
		for _, c := range spec.Components() {
			if !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	return out
}
