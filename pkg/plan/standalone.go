/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LeftOut is a rendered object that standalone output (StandaloneObjects) leaves out
// because kubectl onto apply or the watch creates it in the cluster itself.
type LeftOut struct {
	Object ObjectRef `json:"object"`
	// At is where the object stood: before the kept object of that index, or after the
	// last one when it equals their number.
	At int `json:"-"`
	// Reason says who creates the object and with what.
	Reason string `json:"reason"`
}

// String is the note that stands in the object's place, "Secret ns/name left out: ...".
func (l LeftOut) String() string {
	return l.Object.String() + " left out: " + l.Reason
}

// StandaloneObjects are a plane's rendered objects as a tool other than kubectl-onto
// (kubectl apply --server-side, a GitOps tool) can apply them as they are, over and
// over, with the objects left out and why:
//
//   - Secrets whose values apply generates (IsGenerated) or whose certificate it
//     issues (IsCertificate) are left out. They render without values, so the API
//     server refuses the kubernetes.io/tls ones and an empty Opaque one would start the
//     pods without credentials; apply, or the watch, creates them in the cluster once.
//   - A workload whose replicas an autoscaler owns after its creation
//     (v1alpha1.CreateOnlyReplicas) carries no spec.replicas, as the planner applies an
//     existing one: a tool that applies the count on every sync would reset the
//     autoscaler's.
//
// objs are not changed; the workloads without replicas are copies.
func StandaloneObjects(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, []LeftOut) {
	kept := make([]*unstructured.Unstructured, 0, len(objs))
	var left []LeftOut
	for _, obj := range objs {
		if reason := createdInCluster(obj); reason != "" {
			left = append(left, LeftOut{Object: RefOf(obj), At: len(kept), Reason: reason})
			continue
		}
		kept = append(kept, withoutCreateOnlyReplicas(obj))
	}
	return kept, left
}

// createdInCluster says who creates obj in the cluster when apply does not write it as
// rendered; empty for every other object.
func createdInCluster(obj *unstructured.Unstructured) string {
	const who = "kubectl onto apply or the watch creates it in the cluster"
	switch {
	case IsGenerated(obj):
		return fmt.Sprintf("%s, with generated values of %s", who, strings.Join(GeneratedKeys(obj), ", "))
	case IsCertificateAuthority(obj):
		return who + ", the platform CA's key and certificate"
	case IsCertificate(obj):
		return fmt.Sprintf("%s, a key and a certificate signed by the CA of Secret %s", who, CertificateIssuer(obj))
	}
	return ""
}
