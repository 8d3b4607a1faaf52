/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import "github.com/coomia-dip/kubectl-onto/api/v1alpha1"

// postgresReplicationComponent is the kustomize Component that turns the postgres base
// into a primary with streaming hot standbys (manifests/base/postgres-replication).
const postgresReplicationComponent = "../../base/postgres-replication"

// postgresReadService is the Service of every postgres pod, rendered with replication:
// read-only clients may use it to spread reads over the standbys.
const postgresReadService = "postgres-read"

// postgresReplication makes a multi-replica postgres one primary (pod 0) and hot standbys
// that copy it: the replication Component (base-backup init container, WAL kept for
// standbys, postgres-read Service), and the postgres Service pinned to the primary. The
// replication user is in the base, on every postgres: the StatefulSet controller
// creates a scale-up's new pods before it updates pod 0, so the primary they copy must
// already have it.
func (b *builder) postgresReplication(o *overlay) error {
	o.k.Components = append(o.k.Components, postgresReplicationComponent)
	if err := b.primaryOnly(o, v1alpha1.ComponentPostgres); err != nil {
		return err
	}
	if pull := b.spec.Global.ImagePullPolicy; pull != "" {
		// The init container runs the main container's image, with its pull policy.
		return o.addJSONPatch("StatefulSet", v1alpha1.ComponentPostgres, []jsonOp{
			opAdd("/spec/template/spec/initContainers/0/imagePullPolicy", pull),
		})
	}
	return nil
}

// postgresReplicated reports whether postgres runs standbys, and so has postgres-read.
func (b *builder) postgresReplicated() bool {
	pg, ok := b.spec.Component(v1alpha1.ComponentPostgres)
	return ok && pg.Enabled() && pg.DesiredReplicas() > 1
}
