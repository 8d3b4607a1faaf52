/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OntoPlatform is one installation of the platform: its version and the shape of every
// plane. `kubectl onto apply` and the `watch` reconciler turn it into Kubernetes objects.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=onto,categories=onto
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.readyComponents`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OntoPlatform struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OntoPlatformSpec `json:"spec"`
	// +optional
	Status OntoPlatformStatus `json:"status,omitempty"`
}

// OntoPlatformList is a list of OntoPlatform.
//
// +kubebuilder:object:root=true
type OntoPlatformList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OntoPlatform `json:"items"`
}

// OntoPlatformSpec is the desired state of the whole platform.
type OntoPlatformSpec struct {
	// Version of the platform release to run, a semantic version such as "1.5.0". It picks
	// the image of every component from the release catalog.
	// +required
	// +kubebuilder:validation:MinLength=1
	// The version becomes the app.kubernetes.io/version label and the image tag of the
	// platform's services, so build metadata ("+...") is not allowed and it fits in a
	// label value (63 characters).
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	Version string `json:"version"`

	// Global settings shared by every component.
	// +kubebuilder:default={}
	// +optional
	Global GlobalSpec `json:"global,omitempty"`

	// Tenancy isolates the platform in its namespace: quota, network policies and the
	// namespace's Pod Security level. Defaulted, so a platform without this section is
	// isolated too.
	// +kubebuilder:default={}
	// +optional
	Tenancy *TenancySpec `json:"tenancy,omitempty"`

	// Infrastructure holds the stateful backing services.
	// +kubebuilder:default={}
	// +optional
	Infrastructure InfrastructureSpec `json:"infrastructure,omitempty"`

	// ControlPlane holds the ontology, schema registry and auth services.
	// +kubebuilder:default={}
	// +optional
	ControlPlane ControlPlaneSpec `json:"controlPlane,omitempty"`

	// DataPlane holds the data service and the Nessie catalog.
	// +kubebuilder:default={}
	// +optional
	DataPlane DataPlaneSpec `json:"dataPlane,omitempty"`

	// IntelligencePlane holds the reasoning service and the agent runtime.
	// +kubebuilder:default={}
	// +optional
	IntelligencePlane IntelligencePlaneSpec `json:"intelligencePlane,omitempty"`

	// Gateway is the platform's single entry point.
	// +kubebuilder:default={}
	// +optional
	Gateway GatewaySpec `json:"gateway,omitempty"`

	// Observability configures metrics, tracing and logging of every service.
	// +kubebuilder:default={}
	// +optional
	Observability ObservabilitySpec `json:"observability,omitempty"`

	// Remediation lets the watch change what the spec renders in answer to failures
	// it sees, such as raising a memory limit after an OOM kill. Off by default.
	// +kubebuilder:default={}
	// +optional
	Remediation RemediationSpec `json:"remediation,omitempty"`

	// Patches are kustomize patches applied, in order, to the objects the rest of the
	// spec renders: what the spec cannot express. They are stored with the platform so
	// that every run, upgrade, rollback and the reconciler render the same objects; a
	// `--patch` file changes one run only. Each entry has the shape of an entry of a
	// kustomization's `patches:`, so one can be pasted from there.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Patches []Patch `json:"patches,omitempty"`
}

// GlobalSpec holds settings every component inherits.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.issuerRef) || (has(self.tlsEnabled) && self.tlsEnabled)",message="issuerRef issues the certificates of TLS between the services: set tlsEnabled: true, or remove it",fieldPath=".tls.issuerRef"
type GlobalSpec struct {
	// ImagePullPolicy of every container.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +kubebuilder:default=IfNotPresent
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImageRegistry prefixes the images of the platform's own services
	// (REGISTRY/NAME:VERSION). Infrastructure images come pinned from the release catalog.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default="ghcr.io/coomia-dip"
	// +optional
	ImageRegistry string `json:"imageRegistry,omitempty"`

	// StorageClass of every PersistentVolumeClaim; empty uses the cluster's default class.
	// It cannot change once set: existing volumes keep the class they were made with.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storageClass cannot change: existing volumes keep the class they were made with; move the data to a new platform instead"
	// +optional
	StorageClass string `json:"storageClass,omitempty"`

	// TLSEnabled turns on TLS between the platform's services: a certificate for each
	// backing service and platform service, mounted read-only, and every connection
	// between them over TLS, verified against the platform's CA.
	// +optional
	TLSEnabled bool `json:"tlsEnabled,omitempty"`

	// TLS says who issues those certificates: apply, from a CA it creates and keeps in
	// the platform's namespace (the default), or cert-manager (issuerRef).
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// ImagePullSecrets given to every ServiceAccount.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// NodeSelector places every pod on a dedicated node pool.
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let every pod run on the tainted nodes of that pool.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// MinReadySeconds is how long a new pod of every Deployment and StatefulSet must stay
	// Ready before it counts as available, so a rollout whose new pods crash seconds after
	// turning Ready stops instead of passing as a success. 0 counts a pod available as
	// soon as it is Ready (dev clusters and CI).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=10
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
}

// TLSSpec configures how the certificates of TLS between the services are issued.
type TLSSpec struct {
	// IssuerRef names a cert-manager issuer: the platform renders a cert-manager
	// Certificate for each service instead of issuing certificates itself. Their
	// Secrets keep the names the pods mount. cert-manager must be installed.
	// +optional
	IssuerRef *IssuerReference `json:"issuerRef,omitempty"`
}

// IssuerReference names a cert-manager Issuer or ClusterIssuer.
type IssuerReference struct {
	// Name of the issuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Kind of the issuer: an Issuer in the platform's namespace or a ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`
	// Group of the issuer's kind; cert-manager's own unless an external issuer's.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default="cert-manager.io"
	// +optional
	Group string `json:"group,omitempty"`
}

// TenancySpec isolates one tenant's platform in its own namespace.
type TenancySpec struct {
	// Mode of isolation; only "namespace" exists today.
	// +kubebuilder:validation:Enum=namespace
	// +kubebuilder:default=namespace
	// +optional
	Mode string `json:"mode,omitempty"`

	// ResourceQuota is the hard limit of a ResourceQuota in the platform's namespace,
	// for example requests.cpu: "10".
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	ResourceQuota corev1.ResourceList `json:"resourceQuota,omitempty"`

	// NetworkPolicy says which traffic may reach the platform's pods.
	// +kubebuilder:default={}
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// PodSecurity is what the namespace does with the Pod Security Standard
	// "restricted", which every pod of the platform meets: enforce it (and warn and
	// audit), only warn and audit (a namespace shared with workloads that do not meet
	// it), or set no Pod Security label at all (a cluster with its own policy).
	// +kubebuilder:validation:Enum=enforce;warn;none
	// +kubebuilder:default=enforce
	// +optional
	PodSecurity PodSecurityMode `json:"podSecurity,omitempty"`
}

// PodSecurityMode is what the platform's namespace does with the Pod Security Standard.
type PodSecurityMode string

// Pod Security modes.
const (
	PodSecurityEnforce PodSecurityMode = "enforce"
	PodSecurityWarn    PodSecurityMode = "warn"
	PodSecurityNone    PodSecurityMode = "none"
)

// NetworkPolicySpec says which traffic may reach the platform's pods. With isolation
// on (the default) the platform's pods accept only the traffic the platform needs:
// its services to the backing services and to each other, the ingress controller to
// the gateway, monitoring to the metrics ports, and AllowedNamespaces.
//
// The namespace lists have no omitempty: an explicit empty list means "none" and must
// survive a round trip through the Go type, where omitempty would drop it and the API
// server would default it again.
type NetworkPolicySpec struct {
	// Isolate renders the NetworkPolicies; false is the explicit opt-out.
	// +kubebuilder:default=true
	// +optional
	Isolate *bool `json:"isolate,omitempty"`

	// AllowedNamespaces may reach every pod of the platform, on every port.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`

	// IngressNamespaces are where the ingress controller runs: they may reach the
	// gateway's HTTP port, and nothing else. [] admits none.
	// +kubebuilder:default={"ingress-nginx"}
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	IngressNamespaces []string `json:"ingressNamespaces"`

	// MonitoringNamespaces are where Prometheus runs: they may reach the metrics
	// port of the platform's services, and nothing else. [] admits none.
	// +kubebuilder:default={"monitoring"}
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	MonitoringNamespaces []string `json:"monitoringNamespaces"`

	// Egress denies the platform's pods every outgoing connection but DNS (kube-dns
	// in kube-system) and the platform's own pods.
	// +optional
	Egress bool `json:"egress,omitempty"`
}

// Resources are compute requests and limits, as in a container. The request of cpu,
// memory and ephemeral-storage must not exceed the limit of the same resource.
//
// One rule per resource rather than one over every key: quantity values have no
// maxLength, so the API server's CEL cost estimate of a rule iterating the map (and of
// a messageExpression joining its keys) exceeds the per-rule budget and the server
// refuses the whole CRD. Each rule below parses two quantities and fits.
//
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('cpu' in self.requests) || !('cpu' in self.limits) || quantity(string(self.requests['cpu'])).compareTo(quantity(string(self.limits['cpu']))) <= 0",message="requests must not exceed limits: cpu",fieldPath=".requests.cpu"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('memory' in self.requests) || !('memory' in self.limits) || quantity(string(self.requests['memory'])).compareTo(quantity(string(self.limits['memory']))) <= 0",message="requests must not exceed limits: memory",fieldPath=".requests.memory"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('ephemeral-storage' in self.requests) || !('ephemeral-storage' in self.limits) || quantity(string(self.requests['ephemeral-storage'])).compareTo(quantity(string(self.limits['ephemeral-storage']))) <= 0",message="requests must not exceed limits: ephemeral-storage",fieldPath=".requests['ephemeral-storage']"
type Resources struct {
	// Requests are the resources the scheduler reserves.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// Limits are the most a container may use.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// StatefulComponentSpec is an infrastructure service run as a StatefulSet with one
// PersistentVolumeClaim per replica, or, with External, a service run elsewhere.
//
// Enabled and Storage have no schema default (render falls back to true and 10Gi):
// a default would be present on every object, and the rules below could not tell a
// user's "enabled: true" next to external from the default. One rule per field, so
// each error names its field; each reads two fields and costs next to nothing.
//
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.enabled) || !self.enabled",message="must not be true when external is set: an external service is not deployed; remove enabled",fieldPath=".enabled"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.replicas)",message="must not be set when external is set: an external service is not deployed",fieldPath=".replicas"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.storage)",message="must not be set when external is set: an external service is not deployed",fieldPath=".storage"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.resources)",message="must not be set when external is set: an external service is not deployed",fieldPath=".resources"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.image)",message="must not be set when external is set: an external service is not deployed",fieldPath=".image"
type StatefulComponentSpec struct {
	// Enabled deploys the component (true when unset); false runs the platform without
	// it. To use a service run elsewhere instead, set External.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// External points the platform's services at a backing service run outside the
	// platform (a managed database or object store): nothing is deployed for it, and
	// the services that use it get its address, TLS setting and credentials.
	// +optional
	External *ExternalServiceSpec `json:"external,omitempty"`

	// Replicas of the StatefulSet. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Storage is the size of each replica's volume; 10Gi when unset.
	// +optional
	Storage *resource.Quantity `json:"storage,omitempty"`

	// Resources of the main container.
	// +optional
	Resources *Resources `json:"resources,omitempty"`

	// Image overrides the image from the release catalog.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
}

// ExternalServiceSpec is a backing service the platform uses but does not run.
type ExternalServiceSpec struct {
	// Host is the service's DNS name or IP address. For Kafka, one bootstrap broker:
	// clients learn the others from it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)$`
	Host string `json:"host"`

	// Port of the service; when unset, the service's usual port: postgres 5432, redis
	// 6379, kafka 9092, minio 9000 (443 with tls).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// TLS makes the platform's services connect with TLS (Postgres sslmode=require,
	// Redis TLS, Kafka security protocol SSL, MinIO over HTTPS), trusting the
	// certificate authorities of their images.
	// +optional
	TLS bool `json:"tls,omitempty"`

	// Database is the Postgres database the services use; "onto" when unset.
	// Postgres only.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_$-]*$`
	// +optional
	Database string `json:"database,omitempty"`

	// CredentialsSecretRef names the Secret, in the platform's namespace, the services
	// log in with. Render does not create it; apply refuses to run while it or one of
	// its keys is missing. Required for postgres and minio; optional for redis (a
	// server without a password); kafka takes none (its clients do not use SASL).
	// +optional
	CredentialsSecretRef *ExternalCredentialsRef `json:"credentialsSecretRef,omitempty"`
}

// ExternalCredentialsRef names a Secret and the keys of the credentials in it.
type ExternalCredentialsRef struct {
	// Name of the Secret, in the platform's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// UsernameKey is the key of the user name: "username" for postgres, "accessKey"
	// (the access key) for minio when unset. Redis takes a password only.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	UsernameKey string `json:"usernameKey,omitempty"`

	// PasswordKey is the key of the password: "password" for postgres and redis,
	// "secretKey" (the secret key) for minio when unset.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	PasswordKey string `json:"passwordKey,omitempty"`
}

// RedisSpec is Redis, standalone or with Sentinel for failover.
type RedisSpec struct {
	StatefulComponentSpec `json:",inline"`

	// Mode is standalone (one primary) or sentinel (primary, replicas and three sentinels).
	// It cannot change on a live platform: clients and replicas are configured for one.
	// +kubebuilder:validation:Enum=standalone;sentinel
	// +kubebuilder:default=standalone
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="redis.mode cannot change on a live platform: its clients, replicas and sentinels are set up for one mode; move the data to a new platform instead"
	// +optional
	Mode RedisMode `json:"mode,omitempty"`
}

// RedisMode is how Redis runs.
type RedisMode string

// Redis modes.
const (
	RedisStandalone RedisMode = "standalone"
	RedisSentinel   RedisMode = "sentinel"
)

// InfrastructureSpec holds the stateful backing services.
//
// The rules on external services that depend on which service it is live here, where
// the service is known; the external fields themselves are one type for all four.
// Each guards its service with has(): the schema's default of this object is {}.
//
// +kubebuilder:validation:XValidation:rule="!has(self.postgres) || !has(self.postgres.external) || has(self.postgres.external.credentialsSecretRef)",message="required: the platform's services log in to an external postgres with it",fieldPath=".postgres.external.credentialsSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.minio) || !has(self.minio.external) || has(self.minio.external.credentialsSecretRef)",message="required: the platform's services log in to an external minio with it",fieldPath=".minio.external.credentialsSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.kafka) || !has(self.kafka.external) || !has(self.kafka.external.credentialsSecretRef)",message="not supported for kafka: the platform's Kafka clients do not use SASL",fieldPath=".kafka.external.credentialsSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.redis) || !has(self.redis.external) || !has(self.redis.external.credentialsSecretRef) || !has(self.redis.external.credentialsSecretRef.usernameKey)",message="not supported for redis: Redis takes a password only",fieldPath=".redis.external.credentialsSecretRef.usernameKey"
// +kubebuilder:validation:XValidation:rule="!has(self.redis) || !has(self.redis.external) || !has(self.redis.mode) || self.redis.mode != 'sentinel'",message="must not be sentinel when external is set: the platform's services reach an external Redis at its host and port",fieldPath=".redis.mode"
// +kubebuilder:validation:XValidation:rule="!has(self.redis) || !has(self.redis.external) || !has(self.redis.external.database)",message="postgres only",fieldPath=".redis.external.database"
// +kubebuilder:validation:XValidation:rule="!has(self.minio) || !has(self.minio.external) || !has(self.minio.external.database)",message="postgres only",fieldPath=".minio.external.database"
// +kubebuilder:validation:XValidation:rule="!has(self.kafka) || !has(self.kafka.external) || !has(self.kafka.external.database)",message="postgres only",fieldPath=".kafka.external.database"
type InfrastructureSpec struct {
	// +kubebuilder:default={}
	// +optional
	Postgres StatefulComponentSpec `json:"postgres,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Redis RedisSpec `json:"redis,omitempty"`
	// MinIO's replicas and volume size cannot change once created: its erasure set
	// spans exactly the drives it was created on. The rules default an absent replicas
	// to 1 as render does, so setting it for the first time is checked too.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="(has(oldSelf.replicas) ? oldSelf.replicas : 1) == (has(self.replicas) ? self.replicas : 1)",message="minio.replicas cannot change once created: MinIO's erasure set spans the drives it was created on; move the data to a new platform instead",fieldPath=".replicas"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.storage) || !has(self.storage) || quantity(string(self.storage)).compareTo(quantity(string(oldSelf.storage))) == 0",message="minio.storage cannot change once created: MinIO's erasure set needs drives of the size it was created with; move the data to a new platform instead",fieldPath=".storage"
	// +optional
	Minio StatefulComponentSpec `json:"minio,omitempty"`
	// Kafka runs in KRaft mode (no ZooKeeper): from 3 replicas with 3 dedicated
	// controllers and that many brokers, below 3 with kafka-0 as the one controller.
	// The controller quorum of a live cluster cannot change, so replicas cannot cross 3.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="((has(oldSelf.replicas) ? oldSelf.replicas : 1) >= 3) == ((has(self.replicas) ? self.replicas : 1) >= 3)",message="kafka.replicas cannot cross 3 on a live platform: from 3 replicas the KRaft controllers are 3 dedicated nodes, below 3 kafka-0 is the one controller, and a running quorum cannot change its voters; move the data to a new platform instead",fieldPath=".replicas"
	// +optional
	Kafka StatefulComponentSpec `json:"kafka,omitempty"`
}

// ServiceSpec is a stateless platform service run as a Deployment.
//
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.enabled) || !self.autoscaling.enabled || !has(self.replicas) || (self.replicas >= self.autoscaling.minReplicas && self.replicas <= self.autoscaling.maxReplicas)",message="replicas must lie within [autoscaling.minReplicas, autoscaling.maxReplicas] when autoscaling is enabled",fieldPath=".replicas"
type ServiceSpec struct {
	// Enabled deploys the service.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Replicas of the Deployment. Defaults to 1. With autoscaling enabled, the count the
	// Deployment is created with, raised to autoscaling.minReplicas; the
	// HorizontalPodAutoscaler owns the count afterwards.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Resources of the service container.
	// +optional
	Resources *Resources `json:"resources,omitempty"`

	// Autoscaling adds a HorizontalPodAutoscaler.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// Image overrides the image from the release catalog.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
}

// AutoscalingSpec becomes an autoscaling/v2 HorizontalPodAutoscaler.
//
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must be less than or equal to maxReplicas",fieldPath=".minReplicas"
type AutoscalingSpec struct {
	// Enabled creates the HorizontalPodAutoscaler.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// MinReplicas is the floor the autoscaler keeps.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	MinReplicas int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the ceiling the autoscaler may reach.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=10
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`

	// TargetCPUUtilization is the average CPU use, in percent of requests, to aim for.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=80
	// +optional
	TargetCPUUtilization int32 `json:"targetCPUUtilization,omitempty"`

	// PodsMetrics are custom per-pod metrics, such as grpc_requests_per_second, with the
	// average value per pod to aim for.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	PodsMetrics []PodsMetricSpec `json:"podsMetrics,omitempty"`

	// ScaleUpStabilizationSeconds is the window over which scale-up recommendations are
	// considered.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=60
	// +optional
	ScaleUpStabilizationSeconds *int32 `json:"scaleUpStabilizationSeconds,omitempty"`

	// ScaleDownStabilizationSeconds is the window over which scale-down recommendations
	// are considered.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=300
	// +optional
	ScaleDownStabilizationSeconds *int32 `json:"scaleDownStabilizationSeconds,omitempty"`
}

// PodsMetricSpec is a custom metric averaged over the service's pods.
type PodsMetricSpec struct {
	// Name of the metric, as served by the custom metrics API.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// AverageValue per pod to aim for.
	// +required
	AverageValue resource.Quantity `json:"averageValue"`
}

// ControlPlaneSpec holds the services that define and guard the ontology.
type ControlPlaneSpec struct {
	// +kubebuilder:default={}
	// +optional
	OntologyService ServiceSpec `json:"ontologyService,omitempty"`
	// +kubebuilder:default={}
	// +optional
	SchemaRegistry ServiceSpec `json:"schemaRegistry,omitempty"`
	// +kubebuilder:default={}
	// +optional
	AuthService ServiceSpec `json:"authService,omitempty"`
}

// DataPlaneSpec holds the services that store and version the data.
type DataPlaneSpec struct {
	// +kubebuilder:default={}
	// +optional
	DataService ServiceSpec `json:"dataService,omitempty"`
	// Nessie is the Iceberg catalog with git-like versioning.
	// +kubebuilder:default={}
	// +optional
	Nessie ServiceSpec `json:"nessie,omitempty"`
}

// IntelligencePlaneSpec holds the reasoning and agent services.
type IntelligencePlaneSpec struct {
	// +kubebuilder:default={}
	// +optional
	ReasoningService ReasoningServiceSpec `json:"reasoningService,omitempty"`
	// +kubebuilder:default={}
	// +optional
	AgentRuntime ServiceSpec `json:"agentRuntime,omitempty"`
}

// ReasoningServiceSpec is a service that may run on GPU nodes.
type ReasoningServiceSpec struct {
	ServiceSpec `json:",inline"`

	// GPU asks for accelerators; pods then run only on GPU nodes.
	// +optional
	GPU *GPUSpec `json:"gpu,omitempty"`
}

// GPUSpec asks for GPUs for each pod.
//
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || self.count >= 1",message="count must be at least 1 when the GPU is enabled",fieldPath=".count"
type GPUSpec struct {
	// Enabled requests GPUs and schedules on GPU nodes.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Count of GPUs per pod.
	// +kubebuilder:validation:Maximum=16
	// +kubebuilder:default=1
	// +optional
	Count int32 `json:"count,omitempty"`
	// ResourceName of the GPU device plugin.
	// +kubebuilder:default="nvidia.com/gpu"
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ResourceName string `json:"resourceName,omitempty"`
}

// GatewaySpec is the platform's entry point and its Ingress.
type GatewaySpec struct {
	ServiceSpec `json:",inline"`

	// Ingress exposes the gateway outside the cluster.
	// +optional
	Ingress *IngressSpec `json:"ingress,omitempty"`
}

// IngressSpec becomes a networking.k8s.io/v1 Ingress in front of the gateway.
//
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !self.tls || (has(self.host) && size(self.host) > 0)",message="host is required when tls is enabled",fieldPath=".host"
type IngressSpec struct {
	// Enabled creates the Ingress.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Host name the Ingress answers for.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Host string `json:"host,omitempty"`
	// TLS terminates TLS at the Ingress with the certificate in TLSSecretName.
	// +optional
	TLS bool `json:"tls,omitempty"`
	// TLSSecretName holds the certificate; defaults to <platform>-gateway-tls.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TLSSecretName string `json:"tlsSecretName,omitempty"`
	// ClassName is the IngressClass to use; empty uses the cluster's default class.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClassName string `json:"className,omitempty"`
	// Annotations of the Ingress, as they are: the ingress controller's settings, or
	// a cert-manager issuer (cert-manager.io/cluster-issuer) that issues the Secret of
	// TLSSecretName. Keys are qualified names, as for any annotation.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ObservabilitySpec configures metrics, tracing and logging.
type ObservabilitySpec struct {
	// +kubebuilder:default={}
	// +optional
	Metrics MetricsSpec `json:"metrics,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Tracing TracingSpec `json:"tracing,omitempty"`
	// +kubebuilder:default={}
	// +optional
	Logging LoggingSpec `json:"logging,omitempty"`
}

// MetricsSpec exposes Prometheus metrics from every service.
type MetricsSpec struct {
	// Enabled exposes a metrics port on every service.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// ServiceMonitor creates a monitoring.coreos.com/v1 ServiceMonitor (needs the
	// Prometheus Operator's CRDs).
	// +optional
	ServiceMonitor bool `json:"serviceMonitor,omitempty"`
	// Interval between scrapes.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Pattern=`^[0-9]+(ms|s|m|h)$`
	// +optional
	Interval string `json:"interval,omitempty"`
}

// TracingSpec injects OpenTelemetry settings into every service.
type TracingSpec struct {
	// Enabled turns on tracing.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Endpoint of the OTLP collector.
	// +kubebuilder:default="http://otel-collector.observability.svc:4317"
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// SamplingRatio of traces kept, from "0" to "1".
	// +kubebuilder:default="0.1"
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]+)?|1(\.0+)?)$`
	// +optional
	SamplingRatio string `json:"samplingRatio,omitempty"`
}

// LoggingSpec sets the log level and format of every service.
type LoggingSpec struct {
	// +kubebuilder:validation:Enum=DEBUG;INFO;WARN;ERROR
	// +kubebuilder:default=INFO
	// +optional
	Level string `json:"level,omitempty"`
	// +kubebuilder:validation:Enum=json;text
	// +kubebuilder:default=json
	// +optional
	Format string `json:"format,omitempty"`
}

// RemediationSpec says which failures the watch may remedy by itself.
type RemediationSpec struct {
	// Memory raises a component's memory limit when its main container is OOM-killed
	// at the limit the platform renders.
	// +kubebuilder:default={}
	// +optional
	Memory MemoryRemediationSpec `json:"memory,omitempty"`
}

// MemoryRemediationSpec is the watch's answer to an OOM kill: the component's memory
// limit times Factor (rounded up to whole MiB), at most Max and what the namespace's
// ResourceQuota leaves, at most once per Cooldown. The raised limit is recorded in
// status.remediations and kept until the spec's own limit is as high.
type MemoryRemediationSpec struct {
	// Enabled lets the watch raise memory limits.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Factor multiplies the limit at each raise: a decimal above 1, at most 4.
	// +kubebuilder:default="1.5"
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:XValidation:rule="double(self) > 1.0 && double(self) <= 4.0",message="factor must be a decimal above 1 and at most 4, such as 1.5"
	// +optional
	Factor string `json:"factor,omitempty"`

	// Max is the highest limit the watch sets; none when unset (the namespace's
	// ResourceQuota still caps it).
	// +optional
	Max *resource.Quantity `json:"max,omitempty"`

	// Cooldown is the least time between two raises of one component.
	// +kubebuilder:default="30m"
	// +optional
	Cooldown *metav1.Duration `json:"cooldown,omitempty"`
}
