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

// postgresBaseBackupInit is the replication Component's init container, which copies
// the primary into a standby's empty volume.
const postgresBaseBackupInit = "basebackup"

// postgresReplication makes a multi-replica postgres one primary (pod 0) and hot standbys
// that copy it: the replication Component (base-backup init container, postgres-read
// Service), and the postgres Service pinned to the primary. The replication user is in
// the base, on every postgres: the StatefulSet controller creates a scale-up's new pods
// before it updates pod 0, so the primary they copy must already have it.
func (b *builder) postgresReplication(o *overlay) {
	o.k.Components = append(o.k.Components, postgresReplicationComponent)
	b.primaryOnly(o, v1alpha1.ComponentPostgres)
	if pull := b.spec.Global.ImagePullPolicy; pull != "" {
		// The init container runs the main container's image, with its pull policy.
		o.patch("StatefulSet", v1alpha1.ComponentPostgres).initContainer(postgresBaseBackupInit)["imagePullPolicy"] = pull
	}
}

// postgresArgs are the arguments of the postgres container: server settings (-c
// name=value) that the image's entrypoint passes on to the server. Args have no merge
// key, so a patch gives the list whole: this is all of it.
func (b *builder) postgresArgs(replicated bool) []string {
	settings := []string{
		// The defaults of PostgreSQL 10 and later, stated so that a changed default
		// cannot silently stop a primary from feeding its standbys.
		"wal_level=replica",
		"max_wal_senders=10",
		"hot_standby=on",
	}
	if replicated {
		// 1 GiB of WAL kept for a standby that falls behind (a restart, a slow disk);
		// one further behind is re-seeded (docs/postgres-failover.md).
		settings = append(settings, "wal_keep_size=1GB")
	}
	if b.tlsEnabled() {
		settings = append(settings, postgresTLSSettings()...)
	}
	args := make([]string, 0, 2*len(settings))
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	return args
}

// postgresReplicated reports whether postgres runs standbys, and so has postgres-read.
func (b *builder) postgresReplicated() bool {
	pg, ok := b.spec.Component(v1alpha1.ComponentPostgres)
	return ok && pg.Enabled() && pg.DesiredReplicas() > 1
}
