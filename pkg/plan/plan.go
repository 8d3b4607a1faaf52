/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package plan computes what applying a platform would change in a cluster, as a value:
// for every object, create, update (with the changed fields), delete (prune) or
// unchanged, found by a server-side apply dry-run against the live object. It prints
// nothing; pkg/printers shows a Plan, and pkg/apply executes one.
package plan

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Action is what applying does to one object.
type Action string

// Actions.
const (
	ActionCreate    Action = "create"
	ActionUpdate    Action = "update"
	ActionDelete    Action = "delete"
	ActionUnchanged Action = "unchanged"
	// ActionReplace recreates a StatefulSet whose volumes grew: its claims are
	// expanded, then it is deleted leaving its pods running (orphaned) and created
	// again, adopting them.
	ActionReplace Action = "replace"
)

// PlatformPlane groups the CRD and the OntoPlatform object itself, planned before the
// platform's planes because everything else depends on them.
const PlatformPlane = "platform"

// Plan is every change of one platform, by plane in apply order.
type Plan struct {
	// Platform is the OntoPlatform the plan is for.
	Platform ObjectRef `json:"platform"`
	// Version is the platform version the plan installs.
	Version string `json:"version"`
	// InstalledVersion is the version the cluster runs now (the OntoPlatform's
	// status.version), empty before the first successful apply. apply checks the move
	// from it to Version against the release's upgrade path.
	InstalledVersion string `json:"installedVersion,omitempty"`
	// UpgradeTo is the target of an upgrade that is in progress or stopped (the
	// OntoPlatform's status.upgrade.to), empty when none is.
	UpgradeTo string `json:"upgradeTo,omitempty"`
	// InventoryID is the ApplySet id the objects carry.
	InventoryID string      `json:"inventoryID"`
	Planes      []PlanePlan `json:"planes"`
	Summary     Summary     `json:"summary"`
	// Warnings are changes that are allowed but reach beyond the platform, such as new
	// Pod Security labels on a namespace that already exists, or whose cause the
	// change alone does not show, such as a certificate re-issued (and why), and what
	// apply would refuse (MissingSecrets).
	Warnings []string `json:"warnings,omitempty"`
	// MissingSecrets are the Secrets the spec names for external services that do not
	// exist or lack keys the pods read. apply refuses to write while there are any:
	// the pods would not start.
	MissingSecrets []MissingSecret `json:"missingSecrets,omitempty"`
	// Failed are the objects the API server refused to plan (a Planner with
	// KeepGoing, the watch), each left out of the plan as unchanged: one object that
	// cannot be repaired does not stop the repair of every other.
	Failed []ObjectFailure `json:"failed,omitempty"`
}

// ObjectFailure is an object a plan or an apply could not write, with the API
// server's answer.
type ObjectFailure struct {
	Plane   string    `json:"plane"`
	Object  ObjectRef `json:"object"`
	Message string    `json:"message"`
}

// FailedError is the error of every object of p that could not be planned, nil when
// there is none.
func (p *Plan) FailedError() error {
	if len(p.Failed) == 0 {
		return nil
	}
	var errs []error
	for _, f := range p.Failed {
		errs = append(errs, fmt.Errorf("plane %s: %s: %s", f.Plane, f.Object, f.Message))
	}
	return errors.Join(errs...)
}

// PlanePlan is the changes of one plane.
type PlanePlan struct {
	Name    string   `json:"name"`
	Changes []Change `json:"changes"`
}

// Change is what happens to one object.
type Change struct {
	Action Action    `json:"action"`
	Object ObjectRef `json:"object"`
	// Fields changed by an update, with old and new values (Secret values masked).
	Fields []FieldChange `json:"fields,omitempty"`
	// Conflicts are fields another field manager owns that this apply would take over;
	// apply fails on them unless forced.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// ResourceVersion of the live object when the plan was made; applying a saved plan
	// refuses to run if it changed. Empty for creates.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// UID of the live object, for deletes and replaces: only this very object goes.
	UID string `json:"uid,omitempty"`
	// TakeOver are fields of other managers this change takes without --force-conflicts,
	// because the plan deletes what owned them (an autoscaler's spec.replicas when
	// autoscaling is turned off).
	TakeOver []Conflict `json:"takeOver,omitempty"`
	// ReplaceLists are lists (such as "spec.ports" of a Service) that apply first
	// sets to the rendered items with a merge patch: they hold items of another
	// manager that server-side apply cannot remove and that make the applied object
	// invalid (a port changed by kubectl patch, whose name the rendered port repeats).
	// Conflicts name those items and their manager.
	ReplaceLists []string `json:"replaceLists,omitempty"`
	// Claims a replace expands first.
	Claims []ClaimResize `json:"claims,omitempty"`
	// Desired is the object to apply (creates and updates). It never holds a Secret
	// value: rendered Secrets carry none.
	Desired *unstructured.Unstructured `json:"desired,omitempty"`
}

// FieldChange is one changed field of an update. Old is absent for an added field and
// New for a removed one.
type FieldChange struct {
	Path string `json:"path"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
}

// Conflict is something of the live object this apply would take from someone else.
type Conflict struct {
	// Kind says whose it is, and so what may take it over.
	Kind    ConflictKind `json:"kind,omitempty"`
	Field   string       `json:"field"`
	Manager string       `json:"manager"`
	Message string       `json:"message,omitempty"`
}

// ConflictKind says what a conflict is over.
type ConflictKind string

// Conflict kinds.
const (
	// ConflictFieldManager: a field another server-side apply manager owns;
	// --force-conflicts takes it over.
	ConflictFieldManager ConflictKind = "field-manager"
	// ConflictInventory: the object is another platform's. Nothing takes it over: two
	// platforms cannot share an object.
	ConflictInventory ConflictKind = "inventory"
	// ConflictUnowned: the object exists but belongs to no platform (made by hand or by
	// another tool); --adopt makes it this platform's, and so prunable.
	ConflictUnowned ConflictKind = "unowned"
)

// ObjectRef names an object.
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// RefOf returns the reference of obj.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	gvk := obj.GroupVersionKind()
	return ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// GroupVersionKind of the reference.
func (r ObjectRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// String is "Kind namespace/name", or "Kind name" when cluster-scoped.
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// key identifies an object across versions of its group.
func (r ObjectRef) key() string {
	return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Summary counts the changes of a plan.
type Summary struct {
	Create    int `json:"create"`
	Update    int `json:"update"`
	Delete    int `json:"delete"`
	Unchanged int `json:"unchanged"`
	Replace   int `json:"replace,omitempty"`
	Conflicts int `json:"conflicts"`
}

// DropObjects removes the desired objects from the changes: a plan keeps every object
// it creates or updates, which a run over many platforms need not hold once it shows
// none.
func (p *Plan) DropObjects() {
	for i := range p.Planes {
		for j := range p.Planes[i].Changes {
			p.Planes[i].Changes[j].Desired = nil
		}
	}
}

// HasChanges reports whether applying the plan would write anything.
func (p *Plan) HasChanges() bool {
	return p.Summary.Create+p.Summary.Update+p.Summary.Delete+p.Summary.Replace > 0
}

// summarize recounts the summary from the changes.
func (p *Plan) summarize() {
	var s Summary
	for _, pl := range p.Planes {
		for _, c := range pl.Changes {
			switch c.Action {
			case ActionCreate:
				s.Create++
			case ActionUpdate:
				s.Update++
			case ActionDelete:
				s.Delete++
			case ActionUnchanged:
				s.Unchanged++
			case ActionReplace:
				s.Replace++
			}
			s.Conflicts += len(c.Conflicts)
		}
	}
	p.Summary = s
}

// Plane returns the plan of the named plane, or nil.
func (p *Plan) Plane(name string) *PlanePlan {
	for i := range p.Planes {
		if p.Planes[i].Name == name {
			return &p.Planes[i]
		}
	}
	return nil
}
