/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase summarises the platform's state for printer columns and humans. Conditions are
// the real status; the phase is derived from them.
// +kubebuilder:validation:Enum=Pending;Installing;Upgrading;Running;Degraded;Error
type Phase string

// Phases of a platform.
const (
	PhasePending    Phase = "Pending"
	PhaseInstalling Phase = "Installing"
	PhaseUpgrading  Phase = "Upgrading"
	PhaseRunning    Phase = "Running"
	PhaseDegraded   Phase = "Degraded"
	PhaseError      Phase = "Error"
)

// Condition types of an OntoPlatform.
const (
	// ConditionReady is True when every enabled component is available at the
	// desired version.
	ConditionReady = "Ready"
	// ConditionProgressing is True while an install, update or upgrade is running.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when a component is unavailable or failing.
	ConditionDegraded = "Degraded"
)

// Condition reasons of an OntoPlatform.
const (
	ReasonInstalled     = "Installed"
	ReasonApplying      = "Applying"
	ReasonUpgrading     = "Upgrading"
	ReasonUpgradeFailed = "UpgradeFailed"
	// ReasonRolledBack: an upgrade failed and every component it moved returned
	// (--atomic); the platform runs the version it started from.
	ReasonRolledBack       = "RolledBack"
	ReasonComponentsReady  = "ComponentsReady"
	ReasonComponentsFailed = "ComponentsNotReady"
	ReasonApplyFailed      = "ApplyFailed"
	ReasonIdle             = "Idle"
	// ReasonRollingOut: the objects are written and the run did not wait (--wait=false);
	// the workloads are still rolling out.
	ReasonRollingOut = "RollingOut"
	// ReasonCLIRunInProgress: a CLI run holds the platform's lock; the watch
	// reconciles after it (Progressing, set by the watch).
	ReasonCLIRunInProgress = "CLIRunInProgress"
	// ReasonInterrupted: a CLI run was stopped (Ctrl-C, SIGTERM) before it finished;
	// what it wrote stays, and a re-run finishes it.
	ReasonInterrupted = "Interrupted"
)

// MaxHistory is how many revisions status keeps.
const MaxHistory = 10

// OntoPlatformStatus is the observed state of the platform.
type OntoPlatformStatus struct {
	// Phase summarises the conditions.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Version of the platform that is installed and running.
	// +optional
	Version string `json:"version,omitempty"`

	// ReadyComponents is "ready/total" for the printer column.
	// +optional
	ReadyComponents string `json:"readyComponents,omitempty"`

	// Components lists every enabled component's readiness.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Components []ComponentStatus `json:"components,omitempty"`

	// Upgrade is the state of an upgrade in progress, kept so an interrupted upgrade
	// resumes where it stopped.
	// +optional
	Upgrade *UpgradeStatus `json:"upgrade,omitempty"`

	// Remediations are the memory limits the watch raised after OOM kills, one per
	// component's container; every render of the platform (watch, apply, plan) applies
	// them while they are above what the spec renders.
	// +listType=map
	// +listMapKey=component
	// +listMapKey=container
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Remediations []Remediation `json:"remediations,omitempty"`

	// History of revisions, newest last, at most MaxHistory.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	History []Revision `json:"history,omitempty"`
}

// ComponentStatus is the readiness of one component.
type ComponentStatus struct {
	// Name of the component, such as "ontology-service".
	Name string `json:"name"`
	// Plane the component belongs to.
	// +optional
	Plane string `json:"plane,omitempty"`
	// Kind of the workload: Deployment or StatefulSet.
	// +optional
	Kind string `json:"kind,omitempty"`
	// DesiredReplicas of the workload.
	// +optional
	DesiredReplicas int32 `json:"desiredReplicas"`
	// ReadyReplicas of the workload.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// Version running, from the workload's version label.
	// +optional
	Version string `json:"version,omitempty"`
	// Ready is true when every desired replica is ready and up to date.
	// +optional
	Ready bool `json:"ready"`
	// Message says why the component is not ready.
	// +optional
	Message string `json:"message,omitempty"`
}

// UpgradeStatus records an upgrade in progress.
type UpgradeStatus struct {
	// From is the version being replaced.
	From string `json:"from"`
	// To is the target version.
	To string `json:"to"`
	// StartedAt is when the upgrade began.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Done lists the components already on the target version.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Done []string `json:"done,omitempty"`
	// Current is the component being upgraded.
	// +optional
	Current string `json:"current,omitempty"`
	// Step of Current: Migrate, Canary, Soak, Rollout, RollingBack or Cleanup.
	// +optional
	Step UpgradeStep `json:"step,omitempty"`
	// FromRevision is the revision the upgrade started from: its snapshot renders
	// the components not upgraded yet, and what a failed component returns to.
	// +optional
	FromRevision int64 `json:"fromRevision,omitempty"`
	// Action is upgrade or rollback.
	// +optional
	Action string `json:"action,omitempty"`
	// Driver is "watch" while the in-cluster watch moves the platform, one component
	// per pass, and goes on with it by itself; empty for a CLI run, whose stop waits
	// for a person (resume or roll back).
	// +kubebuilder:validation:Enum=watch
	// +optional
	Driver string `json:"driver,omitempty"`
	// Target names the Secret that holds what the run moves to (spec with patches,
	// release entry), stored before its first write: a resume, an undo, doctor and
	// the watch render it again without the file or --releases directory it came
	// from. It goes when the run ends.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Target string `json:"target,omitempty"`
	// FailedComponent names the component whose canary or rollout failed.
	// +optional
	FailedComponent string `json:"failedComponent,omitempty"`
	// Message says what happened last.
	// +optional
	Message string `json:"message,omitempty"`
}

// UpgradeDriverWatch is status.upgrade.driver while the watch moves the platform.
const UpgradeDriverWatch = "watch"

// UpgradeStep is where an upgrade is within its current component.
// +kubebuilder:validation:Enum=Migrate;Canary;Soak;Rollout;RollingBack;Cleanup
type UpgradeStep string

// Upgrade steps.
const (
	// StepMigrate: the component's migration Job of the new release runs.
	StepMigrate UpgradeStep = "Migrate"
	// StepCanary: one pod of the new version is starting beside the old ones.
	StepCanary UpgradeStep = "Canary"
	// StepSoak: the canary is ready and watched for a while.
	StepSoak UpgradeStep = "Soak"
	// StepRollout: the component's objects are the new version's, rolling out.
	StepRollout UpgradeStep = "Rollout"
	// StepRollingBack: the component failed and returns to its old objects.
	StepRollingBack UpgradeStep = "RollingBack"
	// StepCleanup: every component is upgraded; old objects are pruned.
	StepCleanup UpgradeStep = "Cleanup"
)

// RevisionResult is how a revision ended.
// +kubebuilder:validation:Enum=Succeeded;Failed;RolledBack;Interrupted
type RevisionResult string

// Revision results.
const (
	RevisionSucceeded  RevisionResult = "Succeeded"
	RevisionFailed     RevisionResult = "Failed"
	RevisionRolledBack RevisionResult = "RolledBack"
	// RevisionInterrupted: the run was stopped (Ctrl-C, SIGTERM) after it wrote.
	RevisionInterrupted RevisionResult = "Interrupted"
)

// Revision is one recorded install, update, upgrade or rollback.
type Revision struct {
	// Revision number, increasing.
	Revision int64 `json:"revision"`
	// Version of the platform at this revision.
	Version string `json:"version"`
	// Time the revision finished.
	Time metav1.Time `json:"time"`
	// Result of the revision.
	Result RevisionResult `json:"result"`
	// Action that made the revision: apply, upgrade, rollback, scale.
	// +optional
	Action string `json:"action,omitempty"`
	// Message with details, such as the failed component.
	// +optional
	Message string `json:"message,omitempty"`
	// Snapshot names the Secret, in the platform's namespace, that holds what this
	// revision rendered from (spec with patches, release entry), so a later run can
	// render the same objects again; empty when none was recorded.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Snapshot string `json:"snapshot,omitempty"`
}

// Remediation is a resource limit the watch raised for a component's container.
type Remediation struct {
	// Component whose limit was raised, such as "nessie".
	// +kubebuilder:validation:MaxLength=63
	// +required
	Component string `json:"component"`
	// Container of the component's pods.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Container string `json:"container"`
	// Resource raised; only "memory" today.
	// +kubebuilder:validation:Enum=memory
	// +required
	Resource string `json:"resource"`
	// From is the limit the container was OOM-killed at.
	// +kubebuilder:validation:MaxLength=64
	// +required
	From string `json:"from"`
	// To is the limit the watch set.
	// +kubebuilder:validation:MaxLength=64
	// +required
	To string `json:"to"`
	// SpecLimit is the limit the spec rendered when the watch first raised this
	// container's: once the spec renders another limit (the file changed it, lower or
	// higher), the file's limit wins and this remediation is no longer rendered.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	SpecLimit string `json:"specLimit,omitempty"`
	// Time of the raise.
	// +required
	Time metav1.Time `json:"time"`
	// Pod that was OOM-killed.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Pod string `json:"pod,omitempty"`
}
