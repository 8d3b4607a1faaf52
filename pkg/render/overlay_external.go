/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"net"
	"strconv"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// external is the external service the platform uses for a backing service, nil when
// the platform runs it (or it is disabled).
func (b *builder) external(backing string) *v1alpha1.ExternalServiceSpec {
	c, ok := b.spec.Component(backing)
	if !ok {
		return nil
	}
	return c.External()
}

// externalPort is the port of an external service: the spec's, else the service's
// usual one. MinIO's is 9000 in plain HTTP, as MinIO serves it, and 443 over TLS, as
// S3-compatible stores and MinIO behind a load balancer serve it.
func externalPort(backing string, ext *v1alpha1.ExternalServiceSpec) int32 {
	if ext.Port != 0 {
		return ext.Port
	}
	switch backing {
	case v1alpha1.ComponentPostgres:
		return 5432
	case v1alpha1.ComponentRedis:
		return 6379
	case v1alpha1.ComponentKafka:
		return 9092
	case v1alpha1.ComponentMinio:
		if ext.TLS {
			return 443
		}
		return 9000
	}
	return 0
}

// externalAddress is host:port, with an IPv6 host in brackets.
func externalAddress(backing string, ext *v1alpha1.ExternalServiceSpec) string {
	return net.JoinHostPort(ext.Host, strconv.Itoa(int(externalPort(backing, ext))))
}

// externalEnv sets in env the address and TLS setting of each external backing
// service used, in the variables a service reads for the in-cluster one. The TLS
// setting is always written, true or false, so the service never guesses; the user
// name comes from the user's Secret with the password (externalCredentials), not from
// this ConfigMap.
func (b *builder) externalEnv(env map[string]string, used map[string]bool) {
	for _, backing := range release.BackingServices() {
		ext := b.external(backing)
		if !used[backing] || ext == nil {
			continue
		}
		switch backing {
		case v1alpha1.ComponentPostgres:
			env["POSTGRES_HOST"] = ext.Host
			env["POSTGRES_PORT"] = strconv.Itoa(int(externalPort(backing, ext)))
			env["POSTGRES_DB"] = orDefault(ext.Database, postgresDB)
			// libpq's sslmode: require encrypts without checking the server's name,
			// which a managed database's certificate may not carry for the address
			// used; the images' CA bundle is all a client has without a caSecretRef.
			env["POSTGRES_SSLMODE"] = "disable"
			if ext.TLS {
				env["POSTGRES_SSLMODE"] = "require"
			}
		case v1alpha1.ComponentRedis:
			// An external Redis is one address; a managed service fails over behind it.
			env["REDIS_MODE"] = string(v1alpha1.RedisStandalone)
			env["REDIS_ADDR"] = externalAddress(backing, ext)
			env["REDIS_TLS"] = strconv.FormatBool(ext.TLS)
		case v1alpha1.ComponentKafka:
			// One bootstrap broker is enough: a Kafka client learns the cluster's
			// brokers from the first it reaches.
			env["KAFKA_BOOTSTRAP_SERVERS"] = externalAddress(backing, ext)
			env["KAFKA_SECURITY_PROTOCOL"] = "PLAINTEXT"
			if ext.TLS {
				env["KAFKA_SECURITY_PROTOCOL"] = "SSL"
			}
		case v1alpha1.ComponentMinio:
			env["MINIO_ENDPOINT"] = externalAddress(backing, ext)
			env["MINIO_SECURE"] = strconv.FormatBool(ext.TLS)
		}
	}
}

// externalCredentials are what a service that uses an external backing service gets
// from the user's Secret (credentialsSecretRef), by the keys the spec names or the
// service's usual ones. Render never creates or reads that Secret: the pods reference
// it, and apply checks that it exists with these keys before writing anything.
func externalCredentials(backing string, ext *v1alpha1.ExternalServiceSpec) []credential {
	ref := ext.CredentialsSecretRef
	if ref == nil {
		// Kafka takes none; a Redis without a password has none.
		return nil
	}
	switch backing {
	case v1alpha1.ComponentPostgres:
		return []credential{
			{env: "POSTGRES_USER", secret: ref.Name, key: orDefault(ref.UsernameKey, "username")},
			{env: "POSTGRES_PASSWORD", secret: ref.Name, key: orDefault(ref.PasswordKey, "password")},
		}
	case v1alpha1.ComponentRedis:
		return []credential{{env: "REDIS_PASSWORD", secret: ref.Name, key: orDefault(ref.PasswordKey, "password")}}
	case v1alpha1.ComponentMinio:
		return []credential{
			{env: "MINIO_ACCESS_KEY", secret: ref.Name, key: orDefault(ref.UsernameKey, "accessKey")},
			{env: "MINIO_SECRET_KEY", secret: ref.Name, key: orDefault(ref.PasswordKey, "secretKey")},
		}
	}
	return nil
}

// externalEgressPolicies let the services that use an external backing service
// connect to it when egress is denied (spec.tenancy.networkPolicy.egress). The rule
// is scoped to the service's port but not to a destination: the host is a DNS name
// whose addresses a NetworkPolicy cannot name (ipBlock takes CIDRs, resolved by no
// one when they change), so any address on that port is allowed, for those pods only.
func (b *builder) externalEgressPolicies(usedBy map[string][]string, policy func(string, map[string]any) namedObject) []namedObject {
	var out []namedObject
	for _, backing := range release.BackingServices() {
		ext, clients := b.external(backing), usedBy[backing]
		if ext == nil || len(clients) == 0 {
			continue
		}
		out = append(out, policy("allow-egress-external-"+backing, map[string]any{
			"podSelector": b.componentPods(clients...),
			"policyTypes": []string{"Egress"},
			"egress": []any{map[string]any{
				"ports": tcpPorts(int(externalPort(backing, ext))),
			}},
		}))
	}
	return out
}
