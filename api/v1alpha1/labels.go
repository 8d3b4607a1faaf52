/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// Labels and annotations on the objects of a platform. They are part of the API: tools
// select on them (status, uninstall, the reconciler, users' own kubectl -l), so every
// package reads them from here.
const (
	// LabelName is the component an object belongs to (postgres, gateway...).
	LabelName = "app.kubernetes.io/name"
	// LabelInstance is the platform's name.
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelPartOf    = "app.kubernetes.io/part-of"
	// LabelVersion is the version of the component's image.
	LabelVersion   = "app.kubernetes.io/version"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelPlane is the plane an object belongs to, so prune and uninstall can order
	// objects the platform no longer renders.
	LabelPlane = "onto.paas/plane"
	// LabelRevisionOf names the platform a revision snapshot Secret belongs to; the
	// snapshots carry no inventory label, so prune and uninstall never list them.
	LabelRevisionOf = "onto.paas/revision-of"
	// LabelRevision is the revision number of a revision snapshot Secret.
	LabelRevision = "onto.paas/revision"
	// LabelTrack marks an upgrade's canary Deployment and its pods (TrackCanary).
	LabelTrack = "onto.paas/track"
	// TrackCanary is LabelTrack's value on a canary.
	TrackCanary = "canary"

	// AnnotationGenerateKeys lists, comma-separated, the keys of a rendered Secret whose
	// random values apply generates once in the cluster; the rendered Secret has none.
	AnnotationGenerateKeys = "onto.paas/generate-keys"
	// AnnotationGenerateFormat gives, comma-separated as key=format, the format of
	// generated keys that are not passwords (GenerateFormatKafkaClusterID); a key it
	// does not name is a random password.
	AnnotationGenerateFormat = "onto.paas/generate-format"
	// GenerateFormatKafkaClusterID is a KRaft cluster id: 16 random bytes, base64url
	// without padding (22 characters), the form kafka-storage formats a volume with.
	GenerateFormatKafkaClusterID = "kafka-cluster-id"

	// AnnotationCertificate marks a rendered Secret of TLS between the platform's
	// services, rendered without values: apply issues its certificate and key once in
	// the cluster, and again only when it must (CertificateServing). Its value is
	// CertificateCA or CertificateServing.
	AnnotationCertificate = "onto.paas/certificate"
	// CertificateCA is AnnotationCertificate's value on the platform CA's Secret.
	CertificateCA = "ca"
	// CertificateServing is AnnotationCertificate's value on a service's serving
	// certificate, signed by the CA Secret AnnotationCertificateIssuer names and
	// re-issued when it nears its end or its DNS names change.
	CertificateServing = "serving"
	// AnnotationCertificateIssuer names the CA Secret that signs a serving certificate.
	AnnotationCertificateIssuer = "onto.paas/certificate-issuer"
	// AnnotationCertificateDNS lists, comma-separated, the DNS names of a serving
	// certificate.
	AnnotationCertificateDNS = "onto.paas/certificate-dns"

	// AnnotationReplicas says who owns a rendered workload's spec.replicas after its
	// creation. ReplicasCreateOnly: the rendered count is the starting size of a new
	// workload only; once it exists its HorizontalPodAutoscaler owns the count, and
	// the planner applies the workload without it.
	AnnotationReplicas = "onto.paas/replicas"
	// ReplicasCreateOnly is AnnotationReplicas's value on an autoscaled workload.
	ReplicasCreateOnly = "create-only"

	// AnnotationDataLayout names the on-disk layout a stateful workload's pods expect
	// of the data its earlier pods wrote (Kafka's cluster id and controller quorum).
	// The planner refuses to change a live workload to another layout, a missing
	// annotation included: the rolling restart would not start on the old data.
	AnnotationDataLayout = "onto.paas/data-layout"
)

// CreateOnlyReplicas reports whether a rendered workload's spec.replicas applies on
// creation only (annotations of the object, AnnotationReplicas).
func CreateOnlyReplicas(annotations map[string]string) bool {
	return annotations[AnnotationReplicas] == ReplicasCreateOnly
}
