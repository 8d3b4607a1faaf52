/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Labels and annotations the renderer sets (defined in the API, shared by every
// package that reads them).
const (
	LabelName      = v1alpha1.LabelName
	LabelInstance  = v1alpha1.LabelInstance
	LabelComponent = v1alpha1.LabelComponent
	LabelPartOf    = v1alpha1.LabelPartOf
	LabelVersion   = v1alpha1.LabelVersion
	LabelManagedBy = v1alpha1.LabelManagedBy

	// PartOf is the app.kubernetes.io/part-of of every object.
	PartOf = "onto-platform"
	// ManagedBy is the app.kubernetes.io/managed-by of every object.
	ManagedBy = "kubectl-onto"

	// AnnotationGenerateKeys lists the keys of a generated Secret.
	AnnotationGenerateKeys = v1alpha1.AnnotationGenerateKeys
)

// Ports of the platform services, fixed by the service base (manifests/base/service).
const (
	portHTTP    = 8080
	portGRPC    = 9090
	portMetrics = 9091
)

// Identities every service uses to reach the infrastructure; the postgres base creates
// this user and database.
const (
	postgresUser     = "onto"
	postgresDB       = "onto"
	redisMasterGroup = "onto"
)

// Defaults the schema sets; Render falls back to them so a platform built in code
// without defaulting still renders sensibly.
const (
	defaultStorage          = "10Gi"
	defaultMinReadySeconds  = 10
	preStopSleepSeconds     = 5
	defaultScaleUpWindow    = 60
	defaultScaleDownWindow  = 300
	defaultGPUResource      = "nvidia.com/gpu"
	defaultTracingEndpoint  = "http://otel-collector.observability.svc:4317"
	defaultSamplingRatio    = "0.1"
	defaultScrapeInterval   = "30s"
	defaultLogLevel         = "INFO"
	defaultLogFormat        = "json"
	sentinelReplicas        = 3
	gpuNodeLabel            = "nvidia.com/gpu.present"
	zoneTopologyKey         = "topology.kubernetes.io/zone"
	hostnameTopologyKey     = "kubernetes.io/hostname"
	podSecurityLevel        = "restricted"
	podSecurityLabelPrefix  = "pod-security.kubernetes.io/"
	networkPolicyNSLabelKey = "kubernetes.io/metadata.name"
)

// PodSecurityVersion is the version of the Pod Security Standards the namespace's
// labels pin: the Kubernetes minor of the API libraries this tool is built and tested
// with (k8s.io/api in go.mod; a test keeps the two together).
const PodSecurityVersion = "v1.37"

// defaultResources are the requests and limits of a component whose spec sets none:
// small enough for a laptop cluster, with limits that leave room for bursts.
func defaultResources(component string) corev1.ResourceRequirements {
	rr := func(reqCPU, reqMem, limCPU, limMem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(reqCPU), corev1.ResourceMemory: resource.MustParse(reqMem)},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limCPU), corev1.ResourceMemory: resource.MustParse(limMem)},
		}
	}
	switch component {
	case v1alpha1.ComponentPostgres:
		return rr("500m", "1Gi", "2", "4Gi")
	case v1alpha1.ComponentRedis:
		return rr("100m", "256Mi", "1", "1Gi")
	case v1alpha1.ComponentRedisSentinel:
		return rr("50m", "64Mi", "200m", "128Mi")
	case v1alpha1.ComponentMinio:
		return rr("250m", "1Gi", "2", "4Gi")
	case v1alpha1.ComponentKafka:
		return rr("500m", "2Gi", "2", "4Gi")
	case v1alpha1.ComponentKafkaController:
		// The metadata quorum only, with a 512m heap (kafkaControllerHeap).
		return rr("100m", "768Mi", "1", "1Gi")
	case v1alpha1.ComponentGateway:
		return rr("200m", "256Mi", "2", "1Gi")
	case v1alpha1.ComponentReasoningService:
		return rr("1", "4Gi", "4", "16Gi")
	case v1alpha1.ComponentAgentRuntime:
		return rr("250m", "512Mi", "2", "2Gi")
	default:
		return rr("100m", "256Mi", "1", "1Gi")
	}
}

// defaultEphemeralStorage is the ephemeral-storage request and limit of a component's
// main container. The kubelet evicts a pod whose emptyDir volumes and container logs
// together pass the sum of its containers' limits, so each limit covers the sizeLimits
// of the emptyDirs its base mounts (kafka: logs 1Gi, tmp 256Mi, config 16Mi) with room
// for logs; the requests are what the pods write in normal running.
func defaultEphemeralStorage(component string) (request, limit resource.Quantity) {
	switch component {
	case v1alpha1.ComponentPostgres:
		return resource.MustParse("256Mi"), resource.MustParse("1Gi")
	case v1alpha1.ComponentRedis, v1alpha1.ComponentMinio:
		return resource.MustParse("128Mi"), resource.MustParse("512Mi")
	case v1alpha1.ComponentRedisSentinel:
		return resource.MustParse("32Mi"), resource.MustParse("256Mi")
	case v1alpha1.ComponentKafka:
		return resource.MustParse("512Mi"), resource.MustParse("2Gi")
	case v1alpha1.ComponentKafkaController:
		// Its emptyDirs: logs 512Mi, tmp 256Mi, config 16Mi.
		return resource.MustParse("128Mi"), resource.MustParse("1Gi")
	default:
		// The platform services: /tmp (256Mi) and their logs.
		return resource.MustParse("128Mi"), resource.MustParse("1Gi")
	}
}

// resourcesOf is the spec's resources when set, else the component's defaults. A spec
// that sets cpu or memory replaces those defaults whole: mixing a user's requests with a
// default limit could put a request above its limit. Ephemeral storage is the exception
// (withEphemeralStorage): a user who sized cpu and memory rarely thinks of it, and a
// container without it may fill the node's disk.
func resourcesOf(component string, r *v1alpha1.Resources) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	if r == nil || (len(r.Requests) == 0 && len(r.Limits) == 0) {
		rr = defaultResources(component)
	} else {
		rr = corev1.ResourceRequirements{Requests: r.Requests.DeepCopy(), Limits: r.Limits.DeepCopy()}
	}
	return withEphemeralStorage(rr, component)
}

// withEphemeralStorage completes rr's ephemeral-storage with the component's defaults:
// a value the spec gives is kept, and a default never crosses it (a default limit below
// the user's request rises to the request, a default request above the user's limit
// falls to the limit).
func withEphemeralStorage(rr corev1.ResourceRequirements, component string) corev1.ResourceRequirements {
	const eph = corev1.ResourceEphemeralStorage
	defReq, defLim := defaultEphemeralStorage(component)
	if rr.Requests == nil {
		rr.Requests = corev1.ResourceList{}
	}
	if rr.Limits == nil {
		rr.Limits = corev1.ResourceList{}
	}
	req, hasReq := rr.Requests[eph]
	lim, hasLim := rr.Limits[eph]
	switch {
	case hasReq && hasLim:
	case hasReq:
		if req.Cmp(defLim) > 0 {
			defLim = req
		}
		rr.Limits[eph] = defLim
	case hasLim:
		if defReq.Cmp(lim) > 0 {
			defReq = lim
		}
		rr.Requests[eph] = defReq
	default:
		rr.Requests[eph], rr.Limits[eph] = defReq, defLim
	}
	return rr
}

// minReadySeconds is spec.global.minReadySeconds, or its schema default.
func (b *builder) minReadySeconds() int32 {
	if m := b.spec.Global.MinReadySeconds; m != nil {
		return *m
	}
	return defaultMinReadySeconds
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// withMemoryLimit is rr with the memory limit of Options.MemoryLimits for component,
// when there is one.
func (b *builder) withMemoryLimit(component string, rr corev1.ResourceRequirements) corev1.ResourceRequirements {
	q, ok := b.memory[component]
	if !ok {
		return rr
	}
	limits := rr.Limits.DeepCopy()
	if limits == nil {
		limits = corev1.ResourceList{}
	}
	limits[corev1.ResourceMemory] = q.DeepCopy()
	rr.Limits = limits
	return rr
}

// MemoryLimit is the memory limit p's spec renders for the main container of
// component (before any override and patch); false when it sets none or there is no
// such component.
func MemoryLimit(p *v1alpha1.OntoPlatform, component string) (resource.Quantity, bool) {
	var res *v1alpha1.Resources
	if c, ok := p.Spec.Component(component); ok {
		if c.Service != nil {
			res = c.Service.Resources
		} else {
			res = c.Stateful.Resources
		}
	} else if component != v1alpha1.ComponentRedisSentinel {
		return resource.Quantity{}, false
	}
	q, ok := resourcesOf(component, res).Limits[corev1.ResourceMemory]
	return q, ok
}
