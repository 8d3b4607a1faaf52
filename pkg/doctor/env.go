/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

// Settings are the thresholds of the checks, from the command's flags.
type Settings struct {
	// Since bounds how old an OOM kill in a container's last state may be to count
	// (lastState stays after the container recovered).
	Since time.Duration
	// MaxRestarts is the restart count above which a container is reported.
	MaxRestarts int32
	// CertWarn is how close to expiry a certificate is reported.
	CertWarn time.Duration
	// LeaseStuck is how long a live lock lease may be held before it is reported.
	LeaseStuck time.Duration
	// ReadyGrace is how long a running pod may take to become ready for the first
	// time before it is reported.
	ReadyGrace time.Duration
}

// DefaultSettings are the flags' defaults.
func DefaultSettings() Settings {
	return Settings{Since: time.Hour, MaxRestarts: 5, CertWarn: 14 * 24 * time.Hour, LeaseStuck: 15 * time.Minute, ReadyGrace: 2 * time.Minute}
}

// Env is one read-only snapshot of what the checks look at, gathered once. A nil or
// empty field means "not there" (no such object), except where a field says it was not
// read at all: checks never guess about what was not gathered.
type Env struct {
	Settings
	// Now is the clock of the snapshot: ages and expiries are relative to it.
	Now time.Time
	// Pre is true for `doctor --pre`: the platform may not be installed yet.
	Pre bool

	// Namespace of the platform (of the file's platform for --pre).
	Namespace string
	// NamespaceExists is false before a first install.
	NamespaceExists bool
	// NamespaceLabels are the labels of the namespace when it exists (PodSecurity).
	NamespaceLabels map[string]string

	// Server is the API server's version; ClientMinor the minor version of the client
	// libraries this binary was built with (1.37 → 37).
	Server      *version.Info
	ClientMinor int

	// Nodes with status.images dropped.
	Nodes []corev1.Node
	// NodeRequests are, per node name, the summed requests of the non-terminated pods
	// on it that are not the platform's own: what the capacity check leaves to others.
	// Nil when not read.
	NodeRequests   map[string]corev1.ResourceList
	StorageClasses []storagev1.StorageClass
	IngressClasses []networkingv1.IngressClass
	// Served are the kinds the desired objects use, each with whether the cluster
	// serves it. Nil when there is no desired state.
	Served map[schema.GroupVersionKind]bool
	// Access are the permission checks of every verb apply uses on every rendered
	// kind, in the namespaces they are written to. Nil when not read.
	Access []Access

	// CRD is the OntoPlatform CRD, nil when not installed.
	CRD *unstructured.Unstructured
	// Platform is the installed OntoPlatform, nil when there is none.
	Platform *v1alpha1.OntoPlatform
	// Status is the live component report of Platform (status.Observer).
	Status *status.Report

	// Desired is what the platform renders: from the latest revision snapshot, else
	// the -f file; nil when neither is there. DesiredSource says which ("revision 7",
	// "platform.yaml").
	Desired       *plan.Desired
	DesiredSource string
	// Plan of Desired against the cluster (drift), nil when not planned. PlanError is
	// why planning failed, when it did.
	Plan      *plan.Plan
	PlanError string
	// DryRunErrors are the server's answers to a dry-run apply of each rendered
	// workload in an existing namespace (PodSecurity and other admission), by
	// kind/name; absent when admitted. Nil when not dry-run: no namespace yet, or an
	// installed platform, whose drift plan dry-runs every object instead.
	DryRunErrors map[string]string

	// Pods of the platform (label-selected, in its namespace only).
	Pods []corev1.Pod
	// Events of the problem pods only, by pod name, oldest first.
	Events map[string][]corev1.Event
	// ServiceAccounts of the platform's pods, by name (their image pull secrets).
	ServiceAccounts map[string]*corev1.ServiceAccount
	HPAs            []autoscalingv2.HorizontalPodAutoscaler
	PDBs            []policyv1.PodDisruptionBudget
	Quotas          []corev1.ResourceQuota
	// Lease is the platform's lock lease (apply.LockName), nil when not held.
	Lease *coordinationv1.Lease

	// Certificates are the kubernetes.io/tls Secrets the platform's Ingress names,
	// parsed while gathering; the key and data are never kept.
	Certificates []Certificate
	// Ingresses of the platform.
	Ingresses []networkingv1.Ingress
}

// Access is whether the user may use a verb on a resource in a namespace.
type Access struct {
	Verb      string `json:"verb"`
	Group     string `json:"group"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason,omitempty"`
}

// Certificate is what doctor keeps of a TLS Secret: names and validity, never the key
// or the certificate's bytes.
type Certificate struct {
	// Secret is the name of the kubernetes.io/tls Secret; Missing when it does not
	// exist, Error when its certificate could not be parsed.
	Secret    string    `json:"secret"`
	Missing   bool      `json:"missing,omitempty"`
	Error     string    `json:"error,omitempty"`
	DNSNames  []string  `json:"dnsNames,omitempty"`
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
	// Hosts are the Ingress hosts served with this Secret.
	Hosts []string `json:"hosts,omitempty"`
	// Ingress is the Ingress naming the Secret.
	Ingress string `json:"ingress,omitempty"`
}

// PlatformRef is namespace/name of the platform diagnosed, "" when unknown.
func (e *Env) PlatformRef() string {
	switch {
	case e.Platform != nil:
		return e.Platform.Namespace + "/" + e.Platform.Name
	case e.Desired != nil && e.Desired.Platform != nil:
		return e.Desired.Platform.GetNamespace() + "/" + e.Desired.Platform.GetName()
	}
	return ""
}

// Rendered returns every object the platform renders, in plane order; nil without a
// desired state.
func (e *Env) Rendered() []*unstructured.Unstructured {
	if e.Desired == nil {
		return nil
	}
	return e.Desired.Objects()
}

// Planes returns the desired planes, nil without a desired state.
func (e *Env) Planes() []render.Plane {
	if e.Desired == nil {
		return nil
	}
	return e.Desired.Planes
}
