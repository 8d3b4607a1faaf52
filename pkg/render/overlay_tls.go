/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/certs"
)

// Certificates of TLS between the platform's services (spec.global.tlsEnabled). Render
// only names them: each is a kubernetes.io/tls Secret without values, whose
// certificate apply issues in the cluster (pkg/certs), so render stays pure and no key
// ever leaves the cluster. With spec.global.tls.issuerRef, each is a cert-manager
// Certificate instead, whose Secret has the same name, so the pods mount the same.

// clusterDomain is the default cluster domain; the certificates carry names with and
// without it, so clients that use either verify.
const clusterDomain = "cluster.local"

// caSecretName is the platform CA's Secret. It carries the platform's name: the CA is
// the trust root of this platform only.
func (b *builder) caSecretName() string { return b.p.Name + "-ca" }

// tlsSecretName is the Secret of a component's serving certificate.
func tlsSecretName(component string) string { return component + "-tls" }

// tlsEnabled reports whether the platform's services talk TLS.
func (b *builder) tlsEnabled() bool { return b.spec.Global.TLSEnabled }

// issuer is the cert-manager issuer of the certificates, nil when apply issues them.
func (b *builder) issuer() *v1alpha1.IssuerReference {
	if t := b.spec.Global.TLS; t != nil {
		return t.IssuerRef
	}
	return nil
}

// addTLSCA adds the platform CA's Secret to the tenancy overlay, the first applied, so
// the CA exists before any serving certificate it signs.
func (b *builder) addTLSCA(o *overlay) error {
	if !b.tlsEnabled() || b.issuer() != nil {
		return nil
	}
	return o.addObject("ca-secret.yaml", map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "kubernetes.io/tls",
		"metadata": map[string]any{
			"name":        b.caSecretName(),
			"annotations": map[string]string{v1alpha1.AnnotationCertificate: v1alpha1.CertificateCA},
		},
	})
}

// addServingCertificate adds to o the Secret of the serving certificate of the
// component behind Service name; headless, when set, is the StatefulSet's governing
// Service, whose pods' names the certificate covers too.
func (b *builder) addServingCertificate(o *overlay, name, headless string) error {
	if !b.tlsEnabled() {
		return nil
	}
	if iss := b.issuer(); iss != nil {
		return o.addObject("certificate.yaml", certManagerCertificate(iss, name, b.serviceDNSNames(name, headless)))
	}
	return o.addObject("tls-secret.yaml", map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "kubernetes.io/tls",
		"metadata": map[string]any{
			"name": tlsSecretName(name),
			"annotations": map[string]string{
				v1alpha1.AnnotationCertificate:       v1alpha1.CertificateServing,
				v1alpha1.AnnotationCertificateIssuer: b.caSecretName(),
				v1alpha1.AnnotationCertificateDNS:    strings.Join(b.serviceDNSNames(name, headless), ","),
			},
		},
	})
}

// certManagerCertificate is the cert-manager Certificate of the Service name: the
// same names, validity, renewal and key as apply would issue, in the Secret the pods
// mount. Kafka's also gets the key and certificate in one file, as apply writes it.
func certManagerCertificate(iss *v1alpha1.IssuerReference, name string, dnsNames []string) map[string]any {
	spec := map[string]any{
		"secretName":  tlsSecretName(name),
		"dnsNames":    dnsNames,
		"duration":    certs.LeafValidity.String(),
		"renewBefore": certs.RenewBefore.String(),
		"privateKey":  map[string]any{"algorithm": "ECDSA", "size": 256, "encoding": "PKCS8", "rotationPolicy": "Always"},
		"usages":      []string{"digital signature", "server auth", "client auth"},
		"issuerRef":   map[string]any{"name": iss.Name, "kind": orDefault(iss.Kind, "Issuer"), "group": orDefault(iss.Group, "cert-manager.io")},
	}
	if name == v1alpha1.ComponentKafka {
		spec["additionalOutputFormats"] = []any{map[string]any{"type": "CombinedPEM"}}
	}
	return map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": tlsSecretName(name)},
		"spec":       spec,
	}
}

// serviceDNSNames are the names a client may reach the Service name by, in the
// platform's namespace: short, namespaced, the .svc name the render passes to clients
// (svcHost) and the fully qualified one; for a StatefulSet, every pod's own name under
// its headless Service too (replication and cluster peers dial those).
func (b *builder) serviceDNSNames(name, headless string) []string {
	ns := b.p.Namespace
	out := []string{name, name + "." + ns, svcHost(name, ns), svcHost(name, ns) + "." + clusterDomain}
	if headless != "" {
		out = append(out, "*."+svcHost(headless, ns), "*."+svcHost(headless, ns)+"."+clusterDomain)
	}
	return out
}

// Where the certificates are mounted, and with which file modes.
const (
	// serviceTLSDir holds a platform service's own certificate, key and the CA.
	serviceTLSDir = "/etc/onto/tls"
	// postgresTLSDir, redisTLSDir, sentinelTLSDir: each server's own Secret.
	postgresTLSDir = "/etc/postgresql/tls"
	redisTLSDir    = "/etc/redis/tls"
	sentinelTLSDir = "/etc/sentinel/tls"
	kafkaTLSDir    = "/etc/kafka/tls"
	// minioCertsDir is the --certs-dir of the MinIO base; a mount over part of its /tmp.
	minioCertsDir = "/tmp/certs"
	// minioSetupCAsDir is where mc looks for CAs under the Job's MC_CONFIG_DIR.
	minioSetupCAsDir = "/tmp/mc/certs/CAs"
	// tlsVolume is the name of the mounted certificate volume in every pod.
	tlsVolume = "tls"

	// modeGroupRead: the pods run as a non-root user whose group is the pod's fsGroup,
	// which the kubelet gives the files of a Secret volume.
	modeGroupRead int32 = 0o440
	// modePostgresKey: Postgres refuses a key file readable by others, and one owned
	// by root (as Secret volume files are) only up to 0640; its user reads it as a
	// member of the fsGroup.
	modePostgresKey int32 = 0o640
)

// tlsMount mounts the Secret read-only at dir in the container main of the workload
// patch p (keys as files, or only items when set).
func tlsMount(p *objPatch, main, secret, dir string, mode int32, items []corev1.KeyToPath) {
	appendItems(p.podSpec(), "volumes", corev1.Volume{Name: tlsVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: ptr.To(mode), Items: items},
	}})
	appendItems(p.container(main), "volumeMounts", corev1.VolumeMount{Name: tlsVolume, MountPath: dir, ReadOnly: true})
}

// httpsProbes switch the HTTP probes of a container (c, its patch) to HTTPS: the
// kubelet does not verify the certificate, it only speaks TLS to a port that serves
// nothing else.
func httpsProbes(c map[string]any, probes ...string) {
	for _, probe := range probes {
		fieldOf(c, probe, "httpGet")["scheme"] = "HTTPS"
	}
}

// serviceTLSPatch mounts a platform service's own certificate, key and CA in its
// container main, and probes its HTTP port over TLS.
func (b *builder) serviceTLSPatch(p *objPatch, main, name string) {
	if !b.tlsEnabled() {
		return
	}
	tlsMount(p, main, tlsSecretName(name), serviceTLSDir, modeGroupRead, nil)
	httpsProbes(p.container(main), "startupProbe", "livenessProbe", "readinessProbe")
}

// serviceTLSEnv adds to a platform service's environment where its certificate, key
// and CA are, and how to reach each backing service it uses over TLS. Postgres
// clients take libpq's own variables, which every libpq-based driver reads.
func (b *builder) serviceTLSEnv(env map[string]string, used map[string]bool) {
	if !b.tlsEnabled() {
		return
	}
	ca := serviceTLSDir + "/" + certs.KeyCA
	env["TLS_CERT_FILE"] = serviceTLSDir + "/" + certs.KeyCert
	env["TLS_KEY_FILE"] = serviceTLSDir + "/" + certs.KeyKey
	env["TLS_CA_FILE"] = ca
	// An external backing service is not signed by the platform's CA: its TLS
	// settings are its own (externalEnv).
	used = maps.Clone(used)
	for c := range used {
		if b.external(c) != nil {
			delete(used, c)
		}
	}
	if used[v1alpha1.ComponentPostgres] {
		// verify-full checks the server's name too: the certificate carries the
		// POSTGRES_HOST the service dials.
		env["PGSSLMODE"] = "verify-full"
		env["PGSSLROOTCERT"] = ca
	}
	if used[v1alpha1.ComponentRedis] {
		env["REDIS_TLS"] = "true"
	}
	if used[v1alpha1.ComponentMinio] {
		env["MINIO_SECURE"] = "true"
	}
	if used[v1alpha1.ComponentKafka] {
		env["KAFKA_SECURITY_PROTOCOL"] = "SSL"
		env["KAFKA_SSL_CA_LOCATION"] = ca
	}
}

// statefulTLSPatch mounts an infrastructure server's certificate in its container
// (named as the component) and makes its probes speak TLS; the servers' own TLS
// settings are in their configuration (postgresArgs, redisTLSConf, kafkaTLSConfig, the
// MinIO certs directory).
func (b *builder) statefulTLSPatch(p *objPatch, name string) {
	if !b.tlsEnabled() {
		return
	}
	secret := tlsSecretName(name)
	switch name {
	case v1alpha1.ComponentPostgres:
		// The probes (pg_isready) need no change: they only ask whether the server
		// accepts connections, and libpq's default sslmode (prefer) speaks TLS.
		tlsMount(p, name, secret, postgresTLSDir, modePostgresKey, nil)
	case v1alpha1.ComponentRedis:
		tlsMount(p, name, secret, redisTLSDir, modeGroupRead, nil)
		redisTLSClient(p.container(name), redisTLSDir, 6379)
	case v1alpha1.ComponentRedisSentinel:
		tlsMount(p, name, secret, sentinelTLSDir, modeGroupRead, nil)
		redisTLSClient(p.container(name), sentinelTLSDir, 26379)
	case v1alpha1.ComponentKafka, v1alpha1.ComponentKafkaController:
		// TCP probes: nothing to change.
		tlsMount(p, name, secret, kafkaTLSDir, modeGroupRead, nil)
	case v1alpha1.ComponentMinio:
		// MinIO wants its own file names in its certs directory, and trusts the CAs
		// of its CAs subdirectory (its peers' certificates in distributed mode).
		items := []corev1.KeyToPath{
			{Key: certs.KeyCert, Path: "public.crt"},
			{Key: certs.KeyKey, Path: "private.key"},
			{Key: certs.KeyCA, Path: "CAs/ca.crt"},
		}
		tlsMount(p, name, secret, minioCertsDir, modeGroupRead, items)
		httpsProbes(p.container(name), "livenessProbe", "readinessProbe")
	}
}

// postgresTLSSettings are the server settings (-c name=value) of Postgres over TLS.
func postgresTLSSettings() []string {
	return []string{
		"ssl=on",
		"ssl_cert_file=" + postgresTLSDir + "/" + certs.KeyCert,
		"ssl_key_file=" + postgresTLSDir + "/" + certs.KeyKey,
		"ssl_ca_file=" + postgresTLSDir + "/" + certs.KeyCA,
	}
}

// redisTLSClient makes redis-cli in the container (c, its patch) speak TLS: the
// readiness probe (PING to the local server at port) and the start script's question
// to the sentinels, which reads REDIS_CLI_TLS.
func redisTLSClient(c map[string]any, dir string, port int) {
	flags := []string{"--tls", "--cacert", dir + "/" + certs.KeyCA}
	fieldOf(c, "readinessProbe", "exec")["command"] = append(append([]string{"redis-cli"}, flags...), "-h", "127.0.0.1", "-p", strconv.Itoa(port), "ping")
	appendItems(c, "env", corev1.EnvVar{Name: "REDIS_CLI_TLS", Value: strings.Join(flags, " ")})
}

// redisTLSConf are the lines of redis.conf (or sentinel.conf) that move the server to
// TLS on its usual port: no plaintext port left, replication and the sentinels' links
// over TLS too. Clients are not asked for a certificate: they authenticate with the
// password.
func redisTLSConf(dir string, port int) []string {
	return []string{
		"port 0",
		"tls-port " + strconv.Itoa(port),
		"tls-cert-file " + dir + "/" + certs.KeyCert,
		"tls-key-file " + dir + "/" + certs.KeyKey,
		"tls-ca-cert-file " + dir + "/" + certs.KeyCA,
		"tls-auth-clients no",
		"tls-replication yes",
	}
}

// minioScheme is the scheme of MinIO's URLs.
func (b *builder) minioScheme() string {
	if b.tlsEnabled() {
		return "https"
	}
	return "http"
}

// minioSetupTLSPatch gives the MinIO setup Job (p, its patch) the CA where mc trusts
// it, and makes it dial https. The CA's certificate alone, from MinIO's Secret (which
// holds it whoever issued it): never a key.
func (b *builder) minioSetupTLSPatch(p *objPatch) {
	if !b.tlsEnabled() {
		return
	}
	tlsMount(p, minioSetup, tlsSecretName(v1alpha1.ComponentMinio), minioSetupCAsDir, modeGroupRead, []corev1.KeyToPath{{Key: certs.KeyCA, Path: certs.KeyCA}})
	appendItems(p.container(minioSetup), "env", corev1.EnvVar{Name: "MINIO_SCHEME", Value: "https"})
}

// kafkaTLSConfig moves every listener of a Kafka configuration (the client, broker
// and controller links alike) to SSL with the mounted certificate. The listeners keep
// their names and only their protocol changes: the image's start script refuses an
// advertised listener named SSL unless it is given a JKS key store and password
// files, which a PEM key store has no use for.
func (b *builder) kafkaTLSConfig(cfg map[string]string) map[string]string {
	if !b.tlsEnabled() {
		return cfg
	}
	var protocols []string
	for _, entry := range strings.Split(cfg["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"], ",") {
		name, _, _ := strings.Cut(entry, ":")
		protocols = append(protocols, name+":SSL")
	}
	cfg["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"] = strings.Join(protocols, ",")
	// PEM stores: the key and certificate from one file, the CA as trusted. No key
	// password: the key is unencrypted PKCS #8 in a Secret only this pod mounts.
	cfg["KAFKA_SSL_KEYSTORE_TYPE"] = "PEM"
	cfg["KAFKA_SSL_KEYSTORE_LOCATION"] = kafkaTLSDir + "/" + certs.KeyCombined
	cfg["KAFKA_SSL_TRUSTSTORE_TYPE"] = "PEM"
	cfg["KAFKA_SSL_TRUSTSTORE_LOCATION"] = kafkaTLSDir + "/" + certs.KeyCA
	return cfg
}
