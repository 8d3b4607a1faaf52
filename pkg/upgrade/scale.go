/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// ActionScale is the action a scale records in the revision history.
const ActionScale = "scale"

// Scale changes one component's replica count, or its autoscaler's bounds, without
// the platform file. Under the platform's lock it edits the spec of the newest
// successful revision's snapshot (spec.patches included, so their effects stay),
// validates it, renders it with the snapshot's release entry and applies it, which
// records a revision (action scale) with a snapshot of its own. Before any write it
// refuses a plan that changes anything but that component's replicas, its
// HorizontalPodAutoscaler and PodDisruptionBudget, and the OntoPlatform's spec of
// them: a cluster that drifted from the revision, or a component whose configuration
// follows its replica count (Kafka's voters, MinIO's drives), needs apply.
type Scale struct {
	// Applier writes the change and takes the lock. Its Observer hears the apply's
	// progress, and a Warning event saying that the platform file now differs from
	// the cluster.
	Applier *apply.Applier
	// Validator checks the edited spec. Build it without a catalog
	// (spec.NewValidator(nil)): the snapshot carries its release entry, which the
	// catalog of this run may lack (a --releases directory of whoever applied it).
	Validator *spec.Validator
	// Namespace and Name of the OntoPlatform; an empty Name is the only one of the
	// namespace.
	Namespace, Name string
	// Component to scale, such as "gateway" (v1alpha1.Component names).
	Component string
	// Replicas sets the replica count of a component without autoscaling.
	Replicas *int32
	// MinReplicas and MaxReplicas set the bounds of an autoscaled component's
	// HorizontalPodAutoscaler; either may be left nil.
	MinReplicas, MaxReplicas *int32
	// Options of the apply: start from apply.DefaultOptions() (Prune, so a
	// PodDisruptionBudget that scaling down makes unneeded goes). Run sets Action,
	// Release and Mode.
	Options apply.Options
}

// ScaleResult is what a scale did.
type ScaleResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Component string `json:"component"`
	// FromRevision is the revision whose snapshot was edited.
	FromRevision int64 `json:"fromRevision"`
	// Change says what was asked, such as "replicas 1 → 2"; Target the outcome,
	// such as "2 replicas".
	Change string `json:"change"`
	Target string `json:"target"`
	// Changed is false when the cluster already had it: nothing was written.
	Changed bool `json:"changed"`
	// Apply is the apply's result; nil when nothing was written.
	Apply *apply.Result `json:"-"`
}

// ScopeError refuses a scale whose plan changes more than the component's replicas,
// autoscaler and disruption budget. Nothing was written.
type ScopeError struct {
	Component string
	// SpecPath of the component, such as "spec.gateway".
	SpecPath string
	// FromRevision is the revision the scale started from.
	FromRevision int64
	// Beyond are changes the edit itself makes: the component's configuration
	// follows its replica count.
	Beyond []string
	// Drift are changes the edit does not make: the cluster differs from the
	// revision (changed since, or applied by another kubectl-onto version).
	Drift []string
}

func (e *ScopeError) Error() string {
	if len(e.Beyond) > 0 {
		return fmt.Sprintf("scaling %s changes more than its replicas, autoscaler and disruption budget: %s; nothing was written. Set %s.replicas in the platform file and apply it (kubectl onto plan shows the whole change)",
			e.Component, listSome(e.Beyond), e.SpecPath)
	}
	return fmt.Sprintf("the cluster drifted from revision %d, which scale starts from: %s; nothing was written. Run kubectl onto apply -f with the platform file first, then scale",
		e.FromRevision, listSome(e.Drift))
}

// listSome joins the first three items and counts the rest.
func listSome(items []string) string {
	const shown = 3
	if len(items) <= shown {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:shown], "; "), len(items)-shown)
}

// Run scales. It returns the result also with an error from the apply, which has then
// recorded a failed revision.
func (s Scale) Run(ctx context.Context) (*ScaleResult, error) {
	if s.Applier == nil || s.Applier.Clients == nil || s.Validator == nil {
		return nil, errors.New("scale: no applier, clients or validator")
	}
	if err := checkScaleArgs(s.Replicas, s.MinReplicas, s.MaxReplicas); err != nil {
		return nil, err
	}
	clients := s.Applier.Clients
	lister := &inventory.Lister{Dynamic: clients.Dynamic, Mapper: clients.Mapper}
	parent, err := lister.Parent(ctx, s.Namespace, s.Name)
	if err != nil {
		return nil, err
	}
	ns, name := parent.GetNamespace(), parent.GetName()
	res := &ScaleResult{Namespace: ns, Name: name, Component: s.Component}

	opts := s.Options
	opts.Action = ActionScale
	// The revision read, the plan checked and the apply are one run: no other run may
	// record a revision or change the platform in between.
	lockCtx, release, err := s.Applier.Lock(ctx, ns, name, opts)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx = lockCtx
	opts.Mode = apply.ModeLocked

	if parent, err = lister.Parent(ctx, ns, name); err != nil {
		return nil, err
	}
	var live v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(parent.Object, &live); err != nil {
		return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", ns, name, err)
	}
	n, err := newestSnapshot(ns, name, live.Status.History)
	if err != nil {
		return nil, err
	}
	res.FromRevision = n
	snap, err := s.Applier.LoadRevision(ctx, ns, name, n)
	if err != nil {
		return nil, fmt.Errorf("scale %s/%s: %w; apply the platform first (it records a new snapshot)", ns, name, err)
	}

	// Both the revision's spec and the edited one are validated (and so defaulted) by
	// this version, so the two renders differ by the edit alone.
	from := snap.Platform(name, ns)
	from.Labels, from.Annotations = appliedMetadata(parent, managerOf(s.Applier))
	if err := s.Validator.Validate(from); err != nil {
		return nil, fmt.Errorf("scale %s/%s: the spec of revision %d does not validate: %w; apply the platform first", ns, name, n, err)
	}
	edited := from.DeepCopy()
	e, err := editSpec(&edited.Spec, s.Component, s.Replicas, s.MinReplicas, s.MaxReplicas)
	if err != nil {
		return nil, err
	}
	res.Change, res.Target = e.change, e.target
	if err := s.Validator.Validate(edited); err != nil {
		return nil, fmt.Errorf("scale %s of %s/%s: %w", s.Component, ns, name, err)
	}
	// The API server would refuse the stored spec's update too (the CRD's transition
	// rules); refused here, nothing of the platform is written.
	if err := (spec.Source{}).Error(spec.CheckTransition(&live.Spec, &edited.Spec)); err != nil {
		return nil, fmt.Errorf("scale %s of %s/%s: %w", s.Component, ns, name, err)
	}
	// The memory limits the watch raised stay raised (status.remediations).
	fromD, err := platform.Loaded{Platform: from, Release: snap.Release, Remediations: live.Status.Remediations}.Desired()
	if err != nil {
		return nil, fmt.Errorf("render revision %d: %w", n, err)
	}
	d, err := platform.Loaded{Platform: edited, Release: snap.Release, Remediations: live.Status.Remediations}.Desired()
	if err != nil {
		return nil, err
	}
	if err := checkRendered(d, e); err != nil {
		return nil, err
	}

	planner := &plan.Planner{Clients: clients, FieldManager: s.Applier.FieldManager, Adopt: opts.Adopt}
	p, err := planner.Plan(ctx, d)
	if err != nil {
		return nil, err
	}
	// apply's own checks first: a stopped upgrade, conflicts with other managers, the
	// version guard (the revision's version is the installed one: it passes).
	opts.Release = &snap.Release
	if err := apply.Preflight(p, opts); err != nil {
		return nil, err
	}
	sc := scaleScope{component: e.component.Name, specPath: e.component.SpecPath, edited: renderDiff(fromD, d)}
	if err := sc.check(p, n); err != nil {
		return nil, err
	}
	if !p.HasChanges() {
		s.emit(apply.Event{Type: apply.EventDone, Message: fmt.Sprintf("%s already has %s: nothing to write", e.component.Name, e.target),
			Phase: string(live.Status.Phase), Version: live.Status.Version, ReadyComponents: live.Status.ReadyComponents})
		return res, nil
	}

	ar, err := s.Applier.Apply(ctx, d, opts)
	res.Apply, res.Changed = ar, ar != nil && ar.Applied > 0
	if res.Changed {
		s.emit(apply.Event{Type: apply.EventWarning, Message: fmt.Sprintf(
			"the platform file now differs from the cluster: update %s of %s in it (%s), or the next apply -f reverts it",
			e.what, e.component.Name, strings.Join(e.fields, ", "))})
	}
	return res, err
}

func (s Scale) emit(e apply.Event) {
	if s.Applier.Observer != nil {
		s.Applier.Observer(e)
	}
}

func managerOf(a *apply.Applier) string {
	if a.FieldManager != "" {
		return a.FieldManager
	}
	return plan.FieldManager
}

// newestSnapshot is the newest Succeeded revision of history that recorded a
// snapshot.
func newestSnapshot(ns, name string, history []v1alpha1.Revision) (int64, error) {
	for i := len(history) - 1; i >= 0; i-- {
		if h := history[i]; h.Result == v1alpha1.RevisionSucceeded && h.Snapshot != "" {
			return h.Revision, nil
		}
	}
	return 0, fmt.Errorf("OntoPlatform %s/%s has no successful revision with a snapshot to scale from: apply the platform first (kubectl onto apply -f FILE)", ns, name)
}

// appliedMetadata returns the labels and annotations of live that manager applied
// (its managedFields entry of operation Apply): the platform file's, which the
// snapshot, holding the spec alone, does not keep. Applying without them would remove
// them; labels other managers set are not this run's to apply.
func appliedMetadata(live *unstructured.Unstructured, manager string) (labels, annotations map[string]string) {
	pick := func(all map[string]string, owned map[string]any) map[string]string {
		out := map[string]string{}
		for k := range owned {
			key, ok := strings.CutPrefix(k, "f:")
			if v, found := all[key]; ok && found {
				out[key] = v
			}
		}
		return out
	}
	labels, annotations = map[string]string{}, map[string]string{}
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Labels      map[string]any `json:"f:labels"`
				Annotations map[string]any `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		labels = pick(live.GetLabels(), fields.Metadata.Labels)
		annotations = pick(live.GetAnnotations(), fields.Metadata.Annotations)
	}
	return labels, annotations
}

// specEdit is what editSpec changed.
type specEdit struct {
	component v1alpha1.Component
	// replicas, minReplicas, maxReplicas are the values asked for; nil is unchanged.
	replicas, minReplicas, maxReplicas *int32
	// change is "replicas 1 → 2"; target "2 replicas"; what "replicas" or
	// "autoscaling"; fields the spec paths with their new values.
	change, target, what string
	fields               []string
}

// checkScaleArgs checks that a scale asks for one kind of change.
func checkScaleArgs(replicas, minReplicas, maxReplicas *int32) error {
	switch {
	case replicas != nil && (minReplicas != nil || maxReplicas != nil):
		return errors.New("--replicas and --min/--max exclude each other: --replicas scales a component without autoscaling, --min/--max bound an autoscaled one")
	case replicas == nil && minReplicas == nil && maxReplicas == nil:
		return errors.New("nothing to change: give --replicas N, or --min and/or --max for an autoscaled component")
	}
	return nil
}

// editSpec sets the replicas, or the autoscaling bounds, of the named component in s.
// Values are checked by the spec's validation afterwards, which names the field.
func editSpec(s *v1alpha1.OntoPlatformSpec, name string, replicas, minReplicas, maxReplicas *int32) (specEdit, error) {
	if err := checkScaleArgs(replicas, minReplicas, maxReplicas); err != nil {
		return specEdit{}, err
	}
	c, ok := s.Component(name)
	if !ok {
		var names []string
		for _, c := range s.Components() {
			names = append(names, c.Name)
		}
		return specEdit{}, fmt.Errorf("unknown component %q: the components are %s", name, strings.Join(names, ", "))
	}
	if c.External() != nil {
		return specEdit{}, fmt.Errorf("component %s is external (%s.external): the platform does not run it, so there is nothing to scale; scale it where it runs", name, c.SpecPath)
	}
	if !c.Enabled() {
		return specEdit{}, fmt.Errorf("component %s is disabled (%s.enabled: false): there is nothing to scale; enable it in the platform file and apply it", name, c.SpecPath)
	}
	e := specEdit{component: c, replicas: replicas, minReplicas: minReplicas, maxReplicas: maxReplicas}
	if replicas != nil {
		if c.Autoscaled() {
			return specEdit{}, fmt.Errorf("%s is autoscaled (%s.autoscaling.enabled: true): its HorizontalPodAutoscaler owns the replica count; change its bounds with --min and --max instead of --replicas", name, c.SpecPath)
		}
		old := c.DesiredReplicas()
		if c.Stateful != nil {
			c.Stateful.Replicas = ptr.To(*replicas)
		} else {
			c.Service.Replicas = ptr.To(*replicas)
		}
		e.change = fmt.Sprintf("replicas %d → %d", old, *replicas)
		e.target = fmt.Sprintf("%d replicas", *replicas)
		e.what = "replicas"
		e.fields = []string{fmt.Sprintf("%s.replicas: %d", c.SpecPath, *replicas)}
		return e, nil
	}
	if !c.Autoscaled() {
		if c.Stateful != nil {
			return specEdit{}, fmt.Errorf("%s is a StatefulSet, which is never autoscaled: --min and --max bound an autoscaler; use --replicas", name)
		}
		return specEdit{}, fmt.Errorf("%s has no autoscaling (%s.autoscaling.enabled is not true): --min and --max bound an autoscaler; use --replicas, or enable autoscaling in the platform file and apply it", name, c.SpecPath)
	}
	a := c.Service.Autoscaling
	// Checked here, not left to validation: the spec omits a zero bound, which the
	// schema's default would then silently replace (1 and 10).
	for _, b := range []struct {
		field string
		v     *int32
	}{{"minReplicas", minReplicas}, {"maxReplicas", maxReplicas}} {
		if b.v != nil && *b.v < 1 {
			path := field.NewPath(strings.Split(c.SpecPath, ".")[0], strings.Split(c.SpecPath, ".")[1:]...).Child("autoscaling", b.field)
			return specEdit{}, field.Invalid(path, *b.v, "an autoscaler keeps at least 1 replica")
		}
	}
	var changes, targets []string
	set := func(field string, to *int32, v *int32) {
		if v == nil {
			return
		}
		changes = append(changes, fmt.Sprintf("autoscaling.%s %d → %d", field, *to, *v))
		targets = append(targets, fmt.Sprintf("autoscaling.%s %d", field, *v))
		e.fields = append(e.fields, fmt.Sprintf("%s.autoscaling.%s: %d", c.SpecPath, field, *v))
		*to = *v
	}
	set("minReplicas", &a.MinReplicas, minReplicas)
	set("maxReplicas", &a.MaxReplicas, maxReplicas)
	e.change, e.target, e.what = strings.Join(changes, ", "), strings.Join(targets, ", "), "autoscaling"
	return e, nil
}

// checkRendered makes sure the rendered objects carry what was asked: a patch in
// spec.patches that sets the replicas (or the autoscaler's bounds) would silently win.
func checkRendered(d *plan.Desired, e specEdit) error {
	name := e.component.Name
	check := func(group, kind, field string, want *int32, path ...string) error {
		if want == nil {
			return nil
		}
		for _, o := range d.Objects() {
			gvk := o.GroupVersionKind()
			if gvk.Group != group || gvk.Kind != kind || o.GetName() != name {
				continue
			}
			got, found, _ := unstructured.NestedInt64(o.Object, path...)
			if !found || got != int64(*want) {
				return fmt.Errorf("spec.patches override %s of %s %s (it renders %s, not %d): change that patch in the platform file and apply it; nothing was written",
					field, kind, name, renderedValue(got, found), *want)
			}
			return nil
		}
		return fmt.Errorf("the platform renders no %s %s (a patch in spec.patches removes it?): nothing to scale; nothing was written", kind, name)
	}
	if e.replicas != nil {
		kind := "Deployment"
		if e.component.Stateful != nil {
			kind = "StatefulSet"
		}
		return check("apps", kind, "the replicas", e.replicas, "spec", "replicas")
	}
	if err := check("autoscaling", "HorizontalPodAutoscaler", "minReplicas", e.minReplicas, "spec", "minReplicas"); err != nil {
		return err
	}
	return check("autoscaling", "HorizontalPodAutoscaler", "maxReplicas", e.maxReplicas, "spec", "maxReplicas")
}

func renderedValue(v int64, found bool) string {
	if !found {
		return "none"
	}
	return fmt.Sprint(v)
}

// scaleScope is what a scale of one component may change.
type scaleScope struct {
	component string
	specPath  string
	// edited are the objects (scaleRefKey) whose rendering the edit changes.
	edited map[string]bool
}

// check refuses a plan with changes outside the scope; from names the revision the
// plan started from.
func (sc scaleScope) check(p *plan.Plan, from int64) error {
	var beyond, drift []string
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			if c.Action == plan.ActionUnchanged || sc.allowed(c) {
				continue
			}
			_, ok := sc.fieldRule(c.Object)
			if sc.edited[scaleRefKey(c.Object)] && c.Object.Kind != v1alpha1.Kind {
				beyond = append(beyond, describeChange(c, ok))
			} else {
				drift = append(drift, describeChange(c, ok))
			}
		}
	}
	if len(beyond)+len(drift) == 0 {
		return nil
	}
	return &ScopeError{Component: sc.component, SpecPath: sc.specPath, FromRevision: from, Beyond: beyond, Drift: drift}
}

// fieldRule says what of an object a scale may change: anything (all: the
// component's autoscaler and disruption budget, whatever the action), the fields ok
// accepts in an update (the component's workload: spec.replicas; the OntoPlatform:
// the component's replicas and autoscaling bounds, and the inventory's kinds, which a
// new PodDisruptionBudget extends), or nothing (ok accepts no field).
func (sc scaleScope) fieldRule(o plan.ObjectRef) (all bool, ok func(path string) bool) {
	switch {
	case o.Group == "autoscaling" && o.Kind == "HorizontalPodAutoscaler" && o.Name == sc.component,
		o.Group == "policy" && o.Kind == "PodDisruptionBudget" && o.Name == sc.component:
		return true, func(string) bool { return true }
	case o.Group == "apps" && (o.Kind == "Deployment" || o.Kind == "StatefulSet") && o.Name == sc.component:
		return false, func(path string) bool { return path == "spec.replicas" }
	case o.Group == v1alpha1.GroupVersion.Group && o.Kind == v1alpha1.Kind:
		paths := map[string]bool{
			sc.specPath + ".replicas":                                         true,
			sc.specPath + ".autoscaling.minReplicas":                          true,
			sc.specPath + ".autoscaling.maxReplicas":                          true,
			"metadata.annotations[" + inventory.ContainsGroupKindsAnnot + "]": true,
		}
		return false, func(path string) bool { return paths[path] }
	}
	return false, func(string) bool { return false }
}

// allowed reports whether c is in the scope (fieldRule). An update without changed
// fields is a conflict alone: not this scale's to take.
func (sc scaleScope) allowed(c plan.Change) bool {
	all, ok := sc.fieldRule(c.Object)
	if all {
		return true
	}
	if c.Action != plan.ActionUpdate || len(c.Fields) == 0 {
		return false
	}
	for _, f := range c.Fields {
		if !ok(f.Path) {
			return false
		}
	}
	return true
}

// describeChange is one change in words: "ConfigMap ns/y would be created",
// "Deployment ns/x (spec.template...) would change", naming the fields of an update
// that ok does not accept (all of them if it accepts every one).
func describeChange(c plan.Change, ok func(string) bool) string {
	switch c.Action {
	case plan.ActionCreate:
		return c.Object.String() + " would be created"
	case plan.ActionDelete:
		return c.Object.String() + " would be deleted"
	case plan.ActionReplace:
		return c.Object.String() + " would be replaced"
	}
	var paths, outside []string
	for _, f := range c.Fields {
		paths = append(paths, f.Path)
		if !ok(f.Path) {
			outside = append(outside, f.Path)
		}
	}
	if len(outside) > 0 {
		paths = outside
	}
	if len(paths) == 0 {
		return c.Object.String() + " would change"
	}
	const shown = 3
	more := ""
	if len(paths) > shown {
		more = fmt.Sprintf(" and %d more fields", len(paths)-shown)
		paths = paths[:shown]
	}
	return fmt.Sprintf("%s (%s%s) would change", c.Object.String(), strings.Join(paths, ", "), more)
}

// scaleRefKey identifies an object across the two renders and the plan.
func scaleRefKey(r plan.ObjectRef) string {
	return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// renderDiff lists the objects (scaleRefKey) that differ between two renders of the same
// platform, or that only one of them has.
func renderDiff(a, b *plan.Desired) map[string]bool {
	index := func(d *plan.Desired) map[string]*unstructured.Unstructured {
		m := map[string]*unstructured.Unstructured{}
		for _, o := range d.Objects() {
			m[scaleRefKey(plan.RefOf(o))] = o
		}
		return m
	}
	ia, ib := index(a), index(b)
	out := map[string]bool{}
	for k, o := range ib {
		if x, ok := ia[k]; !ok || !reflect.DeepEqual(x.Object, o.Object) {
			out[k] = true
		}
	}
	for k := range ia {
		if _, ok := ib[k]; !ok {
			out[k] = true
		}
	}
	return out
}
