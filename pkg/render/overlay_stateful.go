/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// statefulOverlays renders an infrastructure component from its own base: ServiceAccount,
// generated Secret, headless and client Services, hashed ConfigMap, StatefulSet with
// volumeClaimTemplates, and a PDB when it runs several replicas. Redis in sentinel mode
// adds a second overlay for the sentinels, MinIO one for the Job that creates the
// services' user.
func (b *builder) statefulOverlays(c v1alpha1.Component) ([]*overlay, error) {
	s := c.Stateful
	storage := resource.MustParse(defaultStorage)
	if s.Storage != nil {
		storage = *s.Storage
	}
	o, err := b.statefulOverlay(c.Name, c.Plane, s.Image, c.DesiredReplicas(), s.Resources, storage.String())
	if err != nil {
		return nil, err
	}
	sts := o.patch("StatefulSet", c.Name)

	ns, replicas := b.p.Namespace, c.DesiredReplicas()
	switch c.Name {
	case v1alpha1.ComponentPostgres:
		sts.container(c.Name)["args"] = b.postgresArgs(replicas > 1)
		if replicas > 1 {
			b.postgresReplication(o)
		}
		o.addConfig("postgres-config", map[string]string{
			"POSTGRES_USER": postgresUser,
			"POSTGRES_DB":   postgresDB,
			// A subdirectory: the volume's root may hold lost+found, which initdb refuses.
			"PGDATA": "/var/lib/postgresql/data/pgdata",
		}, nil)
	case v1alpha1.ComponentRedis:
		return b.redisOverlays(c, o)
	case v1alpha1.ComponentMinio:
		volumes := "/data"
		if replicas > 1 {
			// MinIO's own range syntax: every replica's drive, one erasure set.
			volumes = fmt.Sprintf("%s://minio-{0...%d}.minio-headless.%s.svc/data", b.minioScheme(), replicas-1, ns)
		}
		o.addConfig("minio-config", map[string]string{"MINIO_VOLUMES": volumes}, nil)
		setup, err := b.minioSetupOverlay(c.Plane, s.Image)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", minioSetup, err)
		}
		return []*overlay{o, setup}, nil
	case v1alpha1.ComponentKafka:
		kafkaBrokerPatch(sts, replicas)
		return b.kafkaOverlays(c, o)
	default:
		return nil, fmt.Errorf("no base for infrastructure component %s", c.Name)
	}
	return []*overlay{o}, nil
}

// statefulOverlay is the part every infrastructure overlay shares: labels, image,
// replicas, resources, placement, pull secrets, the data volume's size (storage, the
// base's when empty) and class, TLS and PDB. Further changes of the StatefulSet go into the same patch
// (o.patch).
func (b *builder) statefulOverlay(name string, plane v1alpha1.Plane, override string, replicas int32, res *v1alpha1.Resources, storage string) (*overlay, error) {
	o := newOverlay(name, plane)
	o.k.Resources = []string{"../../base/" + name}
	image, err := b.rel.Image(name, b.spec.Global.ImageRegistry, override)
	if err != nil {
		return nil, err
	}
	// The pod template carries the version of the component's own image, not the
	// platform's: a platform release that keeps this image leaves the template byte
	// for byte as it was, so the StatefulSet does not restart its pods for nothing.
	// The object's metadata keeps the platform version (status and doctor read it).
	version := imageVersion(image)
	selector, meta := b.labels(name, plane)
	o.setLabels(selector, meta, version)
	o.setImage(name, image)
	o.k.Replicas = append(o.k.Replicas, replicaOf(name, replicas))

	rr := b.withMemoryLimit(name, resourcesOf(name, res))
	sts := o.patch("StatefulSet", name)
	b.podPatch(sts, name, &rr, false, true)
	setTemplateVersion(sts, version)
	if claim := b.dataClaim(storage); claim != nil && storage != noVolume {
		sts.set([]any{claim}, "spec", "volumeClaimTemplates")
	}
	if pp := b.spec.Global.ImagePullPolicy; pp != "" && (name == v1alpha1.ComponentKafka || name == v1alpha1.ComponentKafkaController) {
		// The init container copies the configuration out of the main image.
		sts.initContainer(kafkaConfigInit)["imagePullPolicy"] = pp
	}
	b.statefulTLSPatch(sts, name)
	b.serviceAccountPatch(o, name, "")
	if err := b.addServingCertificate(o, name, name+"-headless"); err != nil {
		return nil, err
	}
	if replicas > 1 {
		if err := o.addObject("pdb.yaml", b.pdb(name)); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// The claim template of a StatefulSet's data volume, and the storage argument of
// statefulOverlay of a StatefulSet without one (redis-sentinel).
const (
	dataVolume = "data"
	noVolume   = "none"
)

// setTemplateVersion sets the version label of a workload's pod template.
func setTemplateVersion(p *objPatch, version string) {
	p.field("spec", "template", "metadata", "labels")[LabelVersion] = version
}

// dataClaim is the patch of the claim template of a StatefulSet's data volume: its
// size (storage, the base's when empty) and the spec's storage class; nil when it
// changes nothing.
func (b *builder) dataClaim(storage string) map[string]any {
	spec := map[string]any{}
	if storage != "" {
		spec["resources"] = map[string]any{"requests": map[string]any{"storage": storage}}
	}
	if sc := b.spec.Global.StorageClass; sc != "" {
		spec["storageClassName"] = sc
	}
	if len(spec) == 0 {
		return nil
	}
	return map[string]any{"metadata": map[string]any{"name": dataVolume}, "spec": spec}
}

// redisOverlays configures Redis, and in sentinel mode its replicas and the three
// sentinels that elect a new primary when the current one fails.
func (b *builder) redisOverlays(c v1alpha1.Component, o *overlay) ([]*overlay, error) {
	ns := b.p.Namespace
	lines := []string{
		"bind * -::*",
		"port 6379",
		"dir /data",
		"appendonly yes",
		// The password (requirepass) comes on stdin from the Secret, never from this
		// ConfigMap. With it, protected mode refuses nothing; it is on for a server that
		// would start without one, which then answers only on loopback.
		"protected-mode yes",
	}
	if b.tlsEnabled() {
		lines = append(lines, redisTLSConf(redisTLSDir, 6379)...) // its "port 0" overrides the above
	}
	conf := strings.Join(append(lines, ""), "\n")
	files := map[string]string{"redis.conf": conf}
	primary := "redis-0.redis-headless." + ns + ".svc"
	if b.spec.Infrastructure.Redis.Mode != v1alpha1.RedisSentinel {
		if c.DesiredReplicas() > 1 {
			// Standalone with replicas: redis-0 is the primary the others replicate,
			// and the only one clients write to.
			files["primary"] = primary + "\n"
			b.primaryOnly(o, c.Name)
		}
		o.addConfig("redis-config", nil, files)
		return []*overlay{o}, nil
	}
	files["primary"] = primary + "\n"
	o.addConfig("redis-config", nil, files)

	so, err := b.statefulOverlay(v1alpha1.ComponentRedisSentinel, c.Plane, "", sentinelReplicas, nil, noVolume)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v1alpha1.ComponentRedisSentinel, err)
	}
	quorum := sentinelReplicas/2 + 1
	sentinelLines := []string{
		"port 26379",
		"dir /data",
		"sentinel resolve-hostnames yes",
		"sentinel announce-hostnames yes",
		fmt.Sprintf("sentinel monitor %s %s 6379 %d", redisMasterGroup, primary, quorum),
		"sentinel down-after-milliseconds " + redisMasterGroup + " 5000",
		"sentinel failover-timeout " + redisMasterGroup + " 60000",
		"sentinel parallel-syncs " + redisMasterGroup + " 1",
	}
	if b.tlsEnabled() {
		sentinelLines = append(sentinelLines, redisTLSConf(sentinelTLSDir, 26379)...)
	}
	sentinel := strings.Join(append(sentinelLines, ""), "\n")
	so.addConfig("redis-sentinel-config", nil, map[string]string{"sentinel.conf": sentinel})
	return []*overlay{o, so}, nil
}

func replicaOf(name string, n int32) types.Replica {
	return types.Replica{Name: name, Count: int64(n)}
}

func resourceQuantity(n int64) *resource.Quantity {
	return resource.NewQuantity(n, resource.DecimalSI)
}

// primaryOnly points the component's client Service at its first pod, the one that
// takes writes. The pod-name label is the StatefulSet controller's own, on every pod: a
// label naming the current primary would need an operator to move it on failover, so
// the selector names the pod, and a manual failover repoints it (docs/postgres-failover.md).
func (b *builder) primaryOnly(o *overlay, name string) {
	o.patch("Service", name).field("spec", "selector")["statefulset.kubernetes.io/pod-name"] = name + "-0"
}
