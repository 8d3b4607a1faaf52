/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// minioServiceCredentials is the generated Secret of the services' MinIO user.
const minioServiceCredentials = "minio-service-credentials"

// credential is one value a platform service receives, as an environment variable,
// from a generated Secret.
type credential struct {
	env, secret, key string
}

// backingCredentials are what a platform service that uses the backing service gets:
// least privilege by need, so a service that never talks to Postgres cannot leak its
// password. Kafka has none: it listens in PLAINTEXT, its address is all a client needs.
func backingCredentials(backing string) []credential {
	switch backing {
	case v1alpha1.ComponentPostgres:
		return []credential{{env: "POSTGRES_PASSWORD", secret: v1alpha1.ComponentPostgres, key: "password"}}
	case v1alpha1.ComponentRedis:
		// The sentinels take the same password, so one value serves both.
		return []credential{{env: "REDIS_PASSWORD", secret: v1alpha1.ComponentRedis, key: "password"}}
	case v1alpha1.ComponentMinio:
		return []credential{
			// The services' own user (the minio-setup Job creates it), never root.
			{env: "MINIO_ACCESS_KEY", secret: minioServiceCredentials, key: "access-key"},
			{env: "MINIO_SECRET_KEY", secret: minioServiceCredentials, key: "secret-key"},
		}
	}
	return nil
}

// usedBackingServices are the backing services c uses by its release catalog entry,
// keeping only those the platform runs or points at externally (a disabled one has
// no Secret and no address).
func (b *builder) usedBackingServices(c v1alpha1.Component) (map[string]bool, error) {
	uses, err := b.rel.Uses(c.Name)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, name := range uses {
		backing, ok := b.spec.Component(name)
		if !ok || backing.Service != nil {
			// The catalog's own check refuses this; a release built in code may not
			// have been through it.
			return nil, fmt.Errorf("release %s: %s uses %q, which is not a backing service", b.rel.Version, c.Name, name)
		}
		if backing.Available() {
			out[name] = true
		}
	}
	return out, nil
}

// credentialPatch appends to the environment of the main container (main, its patch)
// the credentials of the backing services used, in the catalog's install order so the
// template is stable:
// from the generated Secrets of the services the platform runs, from the user's
// Secret of an external one. The references are not optional: a pod that would start
// without its password fails to start instead, and says which Secret it misses.
func (b *builder) credentialPatch(main map[string]any, used map[string]bool) {
	for _, c := range (&v1alpha1.OntoPlatformSpec{}).Components() {
		if !used[c.Name] {
			continue
		}
		creds := backingCredentials(c.Name)
		if ext := b.external(c.Name); ext != nil {
			creds = externalCredentials(c.Name, ext)
		}
		for _, cred := range creds {
			appendItems(main, "env", corev1.EnvVar{
				Name: cred.env,
				ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: cred.secret},
					Key:                  cred.key,
				}},
			})
		}
	}
}
