/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Messages of the transition rules: word for word those of the CRD's
// x-kubernetes-validations (api/v1alpha1 markers), so a change reads the same whether
// kubectl-onto or the API server refuses it. TestTransitionMatchesCRD holds them equal.
const (
	msgKafkaQuorum   = "kafka.replicas cannot cross 3 on a live platform: from 3 replicas the KRaft controllers are 3 dedicated nodes, below 3 kafka-0 is the one controller, and a running quorum cannot change its voters; move the data to a new platform instead"
	msgMinioReplicas = "minio.replicas cannot change once created: MinIO's erasure set spans the drives it was created on; move the data to a new platform instead"
	msgMinioStorage  = "minio.storage cannot change once created: MinIO's erasure set needs drives of the size it was created with; move the data to a new platform instead"
	msgRedisMode     = "redis.mode cannot change on a live platform: its clients, replicas and sentinels are set up for one mode; move the data to a new platform instead"
)

// CheckTransition returns the changes from old (the live platform's spec) to new that
// would break the running cluster: the CRD's transition rules, evaluated offline so
// that plan and apply refuse them with the file's line before any request writes.
// Both specs are defaulted (Load, Validate); a field absent from either is taken as
// render takes it (replicas 1), as the CEL rules do.
func CheckTransition(old, new *v1alpha1.OntoPlatformSpec) field.ErrorList {
	infra := field.NewPath("spec", "infrastructure")
	oldInfra, newInfra := &old.Infrastructure, &new.Infrastructure
	var errs field.ErrorList

	if o, n := replicasOf(oldInfra.Kafka), replicasOf(newInfra.Kafka); (o >= 3) != (n >= 3) {
		errs = append(errs, field.Invalid(infra.Child("kafka", "replicas"), n, msgKafkaQuorum))
	}
	if o, n := replicasOf(oldInfra.Minio), replicasOf(newInfra.Minio); o != n {
		errs = append(errs, field.Invalid(infra.Child("minio", "replicas"), n, msgMinioReplicas))
	}
	if o, n := oldInfra.Minio.Storage, newInfra.Minio.Storage; o != nil && n != nil && o.Cmp(*n) != 0 {
		errs = append(errs, field.Invalid(infra.Child("minio", "storage"), n.String(), msgMinioStorage))
	}
	// The schema defaults mode, so both are set on defaulted specs; an unset one (a spec
	// built in code) is not compared, as CEL runs a field's rule only when both exist.
	if o, n := oldInfra.Redis.Mode, newInfra.Redis.Mode; o != "" && n != "" && o != n {
		errs = append(errs, field.Invalid(infra.Child("redis", "mode"), string(n), msgRedisMode))
	}
	return errs
}

// replicasOf is a stateful component's replicas, 1 when unset.
func replicasOf(s v1alpha1.StatefulComponentSpec) int32 {
	if s.Replicas == nil {
		return 1
	}
	return *s.Replicas
}

// Source is the file and document a platform was loaded from (LoadSources), to place
// issues found after loading at their lines. The zero Source places them at no line.
type Source struct {
	// File is the name the input was loaded under.
	File string
	// Document is the 1-based index of the document in a file of several; 0 otherwise.
	Document int
	lines    lineIndex
}

// Error is errs, issues of the platform loaded from s, as an *Error at their lines;
// nil when errs is empty.
func (s Source) Error(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	issues := make([]Issue, 0, len(errs))
	for _, e := range errs {
		issues = append(issues, newIssue(e, s.lines.line(e.Field), s.Document))
	}
	return &Error{File: s.File, Issues: sortIssues(issues)}
}
