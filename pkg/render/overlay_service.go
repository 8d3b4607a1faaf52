/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// builder generates the overlays of one platform.
type builder struct {
	p    *v1alpha1.OntoPlatform
	spec *v1alpha1.OntoPlatformSpec
	rel  release.Release
	// memory are the memory limit overrides of Options.MemoryLimits.
	memory map[string]resource.Quantity
}

// serviceBase is the name of every object of the generic service base, which each
// service's overlay renames to the component.
const serviceBase = "service"

// overlays lists the generated overlays in plane order: tenancy, the components in
// install order, then observability. Disabled components have none.
func (b *builder) overlays() ([]*overlay, error) {
	var out []*overlay
	t, err := b.tenancyOverlay()
	if err != nil {
		return nil, fmt.Errorf("tenancy: %w", err)
	}
	out = append(out, t)
	for _, c := range b.spec.Components() {
		if !c.Enabled() {
			continue
		}
		var os []*overlay
		if c.Service != nil {
			var o *overlay
			o, err = b.serviceOverlay(c)
			os = []*overlay{o}
		} else {
			os, err = b.statefulOverlays(c)
		}
		if err != nil {
			return nil, fmt.Errorf("component %s (%s): %w", c.Name, c.SpecPath, err)
		}
		out = append(out, os...)
	}
	obs, err := b.observabilityOverlay()
	if err != nil {
		return nil, fmt.Errorf("observability: %w", err)
	}
	if obs != nil {
		out = append(out, obs)
	}
	return out, nil
}

// labels returns the selector labels and the other recommended labels of a component.
func (b *builder) labels(name string, plane v1alpha1.Plane) (selector, meta map[string]string) {
	return map[string]string{LabelName: name, LabelInstance: b.p.Name},
		map[string]string{
			LabelComponent: string(plane),
			LabelPartOf:    PartOf,
			LabelVersion:   b.spec.Version,
			LabelManagedBy: ManagedBy,
		}
}

// serviceOverlay renders a stateless platform service from the generic service base:
// ServiceAccount, Service, hashed ConfigMap, Deployment, and the HPA, PDB and Ingress
// its spec asks for.
func (b *builder) serviceOverlay(c v1alpha1.Component) (*overlay, error) {
	o := newOverlay(c.Name, c.Plane)
	o.k.Resources = []string{"../../base/service"}
	selector, meta := b.labels(c.Name, c.Plane)
	o.setLabels(selector, meta, "")

	image, err := b.rel.Image(c.Name, b.spec.Global.ImageRegistry, c.Service.Image)
	if err != nil {
		return nil, err
	}
	o.setImage(serviceBase, image)
	o.k.Replicas = append(o.k.Replicas, replicaOf(serviceBase, startReplicas(c)))
	used, err := b.usedBackingServices(c)
	if err != nil {
		return nil, err
	}
	o.addConfig(c.Name+"-config", b.serviceConfig(c, used), nil)

	// The base's objects are all named "service": the patches rename them to the
	// component, after the build, with the ServiceAccount's name in
	// serviceAccountName; the container too, after the patch that finds it by the
	// base's name. The ConfigMap reference is the generated ConfigMap's name, which
	// kustomize completes with the content hash (configRef).
	res := b.withMemoryLimit(c.Name, resourcesOf(c.Name, c.Service.Resources))
	dep := o.patch("Deployment", serviceBase)
	dep.rename = c.Name
	dep.renameContainer = [2]string{serviceBase, c.Name}
	b.podPatch(dep, serviceBase, &res, c.Name == v1alpha1.ComponentReasoningService, true)
	main := dep.container(serviceBase)
	main["envFrom"] = []any{map[string]any{"configMapRef": map[string]any{"name": c.Name + "-config"}}}
	// Whatever its count: a pod template that depended on the replicas would make a
	// scale from 1 to 2 (kubectl onto scale, an autoscaler's floor) restart every pod.
	b.spreadPatch(dep, c.Name)
	if c.Autoscaled() {
		// The HPA owns the count once the Deployment exists: an applied replicas field
		// would reset it on every apply. The count is still rendered, so a new
		// Deployment starts at its floor instead of at 1 until the HPA's first sync
		// (and a plane's wait does not pass at 1/1); the planner drops it from the
		// apply of a Deployment that exists.
		dep.set(map[string]string{v1alpha1.AnnotationReplicas: v1alpha1.ReplicasCreateOnly}, "metadata", "annotations")
	}
	b.credentialPatch(main, used)
	b.serviceTLSPatch(dep, serviceBase, c.Name)
	if gpu := b.spec.IntelligencePlane.ReasoningService.GPU; c.Name == v1alpha1.ComponentReasoningService && gpu != nil && gpu.Enabled {
		// GPUs are usually all taken: a surge pod would wait for one forever and the
		// rollout with it. Replace one pod at a time instead.
		dep.set(map[string]any{"maxSurge": 0, "maxUnavailable": 1}, "spec", "strategy", "rollingUpdate")
	}
	svc := o.patch("Service", serviceBase)
	svc.rename = c.Name
	if !b.metricsEnabled() {
		deleteItem(svc.field("spec"), "ports", map[string]any{"port": portMetrics, "protocol": "TCP"})
	}
	b.serviceAccountPatch(o, serviceBase, c.Name)

	if err := b.addServingCertificate(o, c.Name, ""); err != nil {
		return nil, err
	}
	if c.Autoscaled() {
		if err := o.addObject("hpa.yaml", b.hpa(c)); err != nil {
			return nil, err
		}
	}
	if runsSeveralPods(c) {
		if err := o.addObject("pdb.yaml", b.pdb(c.Name)); err != nil {
			return nil, err
		}
	}
	if c.Name == v1alpha1.ComponentGateway {
		if in := b.spec.Gateway.Ingress; in != nil && in.Enabled {
			if err := o.addObject("ingress.yaml", b.ingress(in)); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// podPatch sets what every workload of the platform takes from the spec: resources of
// its main container, pull policy, pull secrets, node selector and tolerations, plus
// GPU scheduling for a GPU service. longRunning workloads (not a Job) also get their
// minReadySeconds, and the preStop sleep of a pod behind a Service.
func (b *builder) podPatch(p *objPatch, main string, res *corev1.ResourceRequirements, gpuService, longRunning bool) {
	g := b.spec.Global
	nodeSelector := map[string]string{}
	for k, v := range g.NodeSelector {
		nodeSelector[k] = v
	}
	tolerations := append([]corev1.Toleration(nil), g.Tolerations...)
	if gpu := b.spec.IntelligencePlane.ReasoningService.GPU; gpuService && gpu != nil && gpu.Enabled {
		if res.Limits == nil {
			res.Limits = corev1.ResourceList{}
		}
		count := gpu.Count
		if count < 1 {
			count = 1
		}
		gpuResource := orDefault(gpu.ResourceName, defaultGPUResource)
		res.Limits[corev1.ResourceName(gpuResource)] = *resourceQuantity(int64(count))
		// The request alone picks GPU nodes; NVIDIA's feature-discovery label keeps
		// the pods off nodes whose device plugin is not up yet. Other vendors' nodes
		// are tainted with their own resource name.
		if gpuResource == defaultGPUResource {
			nodeSelector[gpuNodeLabel] = "true"
		}
		tolerations = append(tolerations, corev1.Toleration{
			Key: gpuResource, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
		})
	}
	c := p.container(main)
	c["resources"] = res
	if longRunning {
		if m := b.minReadySeconds(); m > 0 {
			// A pod counts as available only after staying Ready this long: a rollout
			// whose new pods crash just after turning Ready stops instead of succeeding.
			// Zero is left out, as the API server stores it: a field rendered as the
			// server keeps it lets a plan prove the object unchanged without a dry-run.
			p.set(m, "spec", "minReadySeconds")
		}
		// Every main container is behind a Service. A terminating pod leaves the
		// Service's endpoints while the kubelet stops it, and kube-proxies and ingress
		// controllers learn it seconds later: the sleep keeps it serving until then,
		// so a rollout or a drain fails no request. The sleep action needs no shell
		// in the image; every base's terminationGracePeriodSeconds (30 s or more)
		// leaves the process its own shutdown time after it.
		c["lifecycle"] = map[string]any{
			"preStop": map[string]any{"sleep": map[string]any{"seconds": preStopSleepSeconds}},
		}
	}
	if g.ImagePullPolicy != "" {
		c["imagePullPolicy"] = g.ImagePullPolicy
	}
	pod := p.podSpec()
	if len(g.ImagePullSecrets) > 0 {
		pod["imagePullSecrets"] = g.ImagePullSecrets
	}
	if len(nodeSelector) > 0 {
		pod["nodeSelector"] = nodeSelector
	}
	if len(tolerations) > 0 {
		pod["tolerations"] = tolerations
	}
}

// serviceAccountPatch renames a base ServiceAccount (when rename is set) and gives it
// the image pull secrets.
func (b *builder) serviceAccountPatch(o *overlay, name, rename string) {
	p := o.patch("ServiceAccount", name)
	p.rename = rename
	if s := b.spec.Global.ImagePullSecrets; len(s) > 0 {
		p.doc["imagePullSecrets"] = s
	}
}

// serviceConfig is the environment of a platform service, from its hashed ConfigMap:
// logging, ports, TLS, tracing and the addresses of the backing services it uses, in
// the cluster or external (externalEnv).
func (b *builder) serviceConfig(c v1alpha1.Component, used map[string]bool) map[string]string {
	s, ns := b.spec, b.p.Namespace
	obs := s.Observability
	env := map[string]string{
		"ONTO_PLATFORM":   b.p.Name,
		"ONTO_COMPONENT":  c.Name,
		"ONTO_VERSION":    s.Version,
		"LOG_LEVEL":       orDefault(obs.Logging.Level, defaultLogLevel),
		"LOG_FORMAT":      orDefault(obs.Logging.Format, defaultLogFormat),
		"HTTP_PORT":       strconv.Itoa(portHTTP),
		"GRPC_PORT":       strconv.Itoa(portGRPC),
		"METRICS_ENABLED": strconv.FormatBool(b.metricsEnabled()),
		"METRICS_PORT":    strconv.Itoa(portMetrics),
		"TLS_ENABLED":     strconv.FormatBool(s.Global.TLSEnabled),
	}
	if obs.Tracing.Enabled {
		env["OTEL_SDK_DISABLED"] = "false"
		env["OTEL_EXPORTER_OTLP_ENDPOINT"] = orDefault(obs.Tracing.Endpoint, defaultTracingEndpoint)
		env["OTEL_SERVICE_NAME"] = c.Name
		env["OTEL_TRACES_SAMPLER"] = "parentbased_traceidratio"
		env["OTEL_TRACES_SAMPLER_ARG"] = orDefault(obs.Tracing.SamplingRatio, defaultSamplingRatio)
		env["OTEL_RESOURCE_ATTRIBUTES"] = "service.namespace=" + b.p.Name + ",service.version=" + s.Version + ",k8s.namespace.name=" + ns
	} else {
		env["OTEL_SDK_DISABLED"] = "true"
	}
	infra := s.Infrastructure
	if used[v1alpha1.ComponentPostgres] && b.external(v1alpha1.ComponentPostgres) == nil {
		env["POSTGRES_HOST"] = svcHost(v1alpha1.ComponentPostgres, ns)
		env["POSTGRES_PORT"] = "5432"
		env["POSTGRES_USER"] = postgresUser
		env["POSTGRES_DB"] = postgresDB
		if b.postgresReplicated() {
			// Standbys serve reads that tolerate replication lag; writes stay on
			// POSTGRES_HOST, the primary.
			env["POSTGRES_READ_HOST"] = svcHost(postgresReadService, ns)
		}
	}
	if used[v1alpha1.ComponentRedis] && b.external(v1alpha1.ComponentRedis) == nil {
		if infra.Redis.Mode == v1alpha1.RedisSentinel {
			env["REDIS_MODE"] = string(v1alpha1.RedisSentinel)
			env["REDIS_SENTINEL_ADDR"] = svcHost(v1alpha1.ComponentRedisSentinel, ns) + ":26379"
			env["REDIS_SENTINEL_MASTER"] = redisMasterGroup
		} else {
			env["REDIS_MODE"] = string(v1alpha1.RedisStandalone)
			env["REDIS_ADDR"] = svcHost(v1alpha1.ComponentRedis, ns) + ":6379"
		}
	}
	if used[v1alpha1.ComponentKafka] && b.external(v1alpha1.ComponentKafka) == nil {
		env["KAFKA_BOOTSTRAP_SERVERS"] = svcHost(v1alpha1.ComponentKafka, ns) + ":9092"
	}
	if used[v1alpha1.ComponentMinio] && b.external(v1alpha1.ComponentMinio) == nil {
		env["MINIO_ENDPOINT"] = svcHost(v1alpha1.ComponentMinio, ns) + ":9000"
	}
	b.serviceTLSEnv(env, used)
	b.externalEnv(env, used)
	if c.Name == v1alpha1.ComponentGateway {
		// The gateway routes to every enabled service over gRPC.
		for _, up := range s.Components() {
			if up.Service != nil && up.Name != v1alpha1.ComponentGateway && up.Enabled() {
				key := "UPSTREAM_" + strings.ToUpper(strings.ReplaceAll(up.Name, "-", "_"))
				env[key] = svcHost(up.Name, ns) + ":" + strconv.Itoa(portGRPC)
			}
		}
	}
	return env
}

// hpa is the autoscaling/v2 HorizontalPodAutoscaler of an autoscaled service: CPU
// utilization plus each custom Pods metric, with the stabilization windows of the spec.
func (b *builder) hpa(c v1alpha1.Component) map[string]any {
	a := c.Service.Autoscaling
	metrics := []any{map[string]any{
		"type": "Resource",
		"resource": map[string]any{
			"name":   "cpu",
			"target": map[string]any{"type": "Utilization", "averageUtilization": a.TargetCPUUtilization},
		},
	}}
	for _, m := range a.PodsMetrics {
		metrics = append(metrics, map[string]any{
			"type": "Pods",
			"pods": map[string]any{
				"metric": map[string]any{"name": m.Name},
				"target": map[string]any{"type": "AverageValue", "averageValue": m.AverageValue.String()},
			},
		})
	}
	window := func(v *int32, def int32) int32 {
		if v == nil {
			return def
		}
		return *v
	}
	min := a.MinReplicas
	if min < 1 {
		min = 1
	}
	return map[string]any{
		"apiVersion": "autoscaling/v2",
		"kind":       "HorizontalPodAutoscaler",
		"metadata":   map[string]any{"name": c.Name},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": c.Name},
			"minReplicas":    min,
			"maxReplicas":    a.MaxReplicas,
			"metrics":        metrics,
			"behavior": map[string]any{
				"scaleUp":   map[string]any{"stabilizationWindowSeconds": window(a.ScaleUpStabilizationSeconds, defaultScaleUpWindow)},
				"scaleDown": map[string]any{"stabilizationWindowSeconds": window(a.ScaleDownStabilizationSeconds, defaultScaleDownWindow)},
			},
		},
	}
}

// spreadPatch spreads a Deployment's pods over zones and nodes, as even as the cluster
// allows but never leaving a pod Pending for it. matchLabelKeys counts only pods of the
// same pod-template-hash, one ReplicaSet: during a rollout the old pods would otherwise
// skew where the new ones go. The hostname spread replaces the base's preferred
// anti-affinity, which cannot count per revision.
func (b *builder) spreadPatch(p *objPatch, name string) {
	constraint := func(key string) map[string]any {
		return map[string]any{
			"maxSkew":           1,
			"topologyKey":       key,
			"whenUnsatisfiable": "ScheduleAnyway",
			"labelSelector":     map[string]any{"matchLabels": map[string]string{LabelName: name, LabelInstance: b.p.Name}},
			"matchLabelKeys":    []string{"pod-template-hash"},
		}
	}
	pod := p.podSpec()
	// The list replaces the base's (a patch merges no other list than objPatch's).
	pod["topologySpreadConstraints"] = []any{constraint(zoneTopologyKey), constraint(hostnameTopologyKey)}
	pod["affinity"] = nil
}

// startReplicas is the count a service's Deployment is created with: the spec's
// replicas (1 when unset), raised to the autoscaler's floor when autoscaled.
func startReplicas(c v1alpha1.Component) int32 {
	n := int32(1)
	if c.Service.Replicas != nil {
		n = *c.Service.Replicas
	}
	if c.Autoscaled() {
		return max(n, c.Service.Autoscaling.MinReplicas)
	}
	return c.DesiredReplicas()
}

// runsSeveralPods reports whether a component may run more than one pod: a fixed count
// above one, or any autoscaler, whose floor may be 1 while it runs ten. Such a
// component gets a PodDisruptionBudget (with maxUnavailable 1 it never blocks a drain
// of a single pod, so an HPA at 1 loses nothing by it).
func runsSeveralPods(c v1alpha1.Component) bool {
	return c.Autoscaled() || c.DesiredReplicas() > 1
}

// pdb lets a drain take one pod of the component at a time. maxUnavailable rather than
// minAvailable, so it holds whatever the autoscaler scales to.
func (b *builder) pdb(name string) map[string]any {
	return map[string]any{
		"apiVersion": "policy/v1",
		"kind":       "PodDisruptionBudget",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"maxUnavailable": 1,
			"selector":       map[string]any{"matchLabels": map[string]string{LabelName: name, LabelInstance: b.p.Name}},
			// Pods that are not running well anyway may always go, so a crash-looping
			// component never blocks a node drain.
			"unhealthyPodEvictionPolicy": "AlwaysAllow",
		},
	}
}

// ingress exposes the gateway's HTTP port.
func (b *builder) ingress(in *v1alpha1.IngressSpec) map[string]any {
	rule := map[string]any{
		"http": map[string]any{"paths": []any{map[string]any{
			"path":     "/",
			"pathType": "Prefix",
			"backend": map[string]any{"service": map[string]any{
				"name": v1alpha1.ComponentGateway,
				"port": map[string]any{"name": "http"},
			}},
		}}},
	}
	if in.Host != "" {
		rule["host"] = in.Host
	}
	spec := map[string]any{"rules": []any{rule}}
	if in.ClassName != "" {
		spec["ingressClassName"] = in.ClassName
	}
	if in.TLS {
		tls := map[string]any{"secretName": orDefault(in.TLSSecretName, b.p.Name+"-gateway-tls")}
		if in.Host != "" {
			tls["hosts"] = []string{in.Host}
		}
		spec["tls"] = []any{tls}
	}
	meta := map[string]any{"name": v1alpha1.ComponentGateway}
	if len(in.Annotations) > 0 {
		meta["annotations"] = in.Annotations
	}
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "Ingress",
		"metadata":   meta,
		"spec":       spec,
	}
}

func (b *builder) metricsEnabled() bool {
	return enabled(b.spec.Observability.Metrics.Enabled)
}

// enabled reads an optional switch whose schema default is true.
func enabled(p *bool) bool { return p == nil || *p }

// svcHost is the DNS name of a Service in the platform's namespace. Without the
// cluster domain, so it works in clusters not named cluster.local.
func svcHost(name, ns string) string { return name + "." + ns + ".svc" }
