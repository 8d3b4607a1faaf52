/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// Plane is a group of components installed, upgraded and waited for together.
type Plane string

// Planes, in the order they are installed. Tenancy objects (namespace, quota, network
// policies) come before everything because every other plane runs inside them.
const (
	PlaneTenancy        Plane = "tenancy"
	PlaneInfrastructure Plane = "infrastructure"
	PlaneControl        Plane = "control"
	PlaneData           Plane = "data"
	PlaneIntelligence   Plane = "intelligence"
	PlaneGateway        Plane = "gateway"
	PlaneObservability  Plane = "observability"
)

// Planes lists every plane in install order; uninstall walks it backwards.
func Planes() []Plane {
	return []Plane{PlaneTenancy, PlaneInfrastructure, PlaneControl, PlaneData,
		PlaneIntelligence, PlaneGateway, PlaneObservability}
}

// Component names: the app.kubernetes.io/name of each workload and the key of its
// image in the release catalog.
const (
	ComponentPostgres         = "postgres"
	ComponentRedis            = "redis"
	ComponentRedisSentinel    = "redis-sentinel"
	ComponentMinio            = "minio"
	ComponentKafka            = "kafka"
	ComponentOntologyService  = "ontology-service"
	ComponentSchemaRegistry   = "schema-registry"
	ComponentAuthService      = "auth-service"
	ComponentDataService      = "data-service"
	ComponentNessie           = "nessie"
	ComponentReasoningService = "reasoning-service"
	ComponentAgentRuntime     = "agent-runtime"
	ComponentGateway          = "gateway"
)

// ComponentKafkaController is the KRaft controller quorum of a Kafka of three or more
// replicas: like redis-sentinel, a workload with no spec section of its own (it runs
// the kafka image of the spec and catalog, so the release catalog has no entry for it).
const ComponentKafkaController = "kafka-controller"

// Component is a typed view of one component of the spec: its name, plane and the
// spec section that configures it. Exactly one of Service and Stateful is set.
//
// +kubebuilder:object:generate=false
type Component struct {
	Name  string
	Plane Plane
	// SpecPath is the JSON path of the component's section in the spec, such as
	// "spec.controlPlane.ontologyService"; errors and scale use it.
	SpecPath string
	Service  *ServiceSpec
	Stateful *StatefulComponentSpec
}

// Enabled reports whether the component is deployed by the platform. A nil Enabled
// means true, the schema's default. An infrastructure service with External set is
// not deployed: the platform uses it (External) but renders, waits for and scales
// nothing of it.
func (c Component) Enabled() bool {
	if c.Service != nil {
		return c.Service.Enabled == nil || *c.Service.Enabled
	}
	if c.Stateful.External != nil {
		return false
	}
	return c.Stateful.Enabled == nil || *c.Stateful.Enabled
}

// External is the external service an infrastructure component points the platform
// at, nil when the platform runs it (or it is disabled) and for platform services.
func (c Component) External() *ExternalServiceSpec {
	if c.Stateful == nil {
		return nil
	}
	return c.Stateful.External
}

// Available reports whether the platform's services can use the component: deployed,
// or external.
func (c Component) Available() bool {
	return c.Enabled() || c.External() != nil
}

// Components lists every component of the spec in install order, enabled or not. The
// pointers refer into s, so a caller may change the spec through them (scale does).
func (s *OntoPlatformSpec) Components() []Component {
	infra, cp, dp, ip := &s.Infrastructure, &s.ControlPlane, &s.DataPlane, &s.IntelligencePlane
	return []Component{
		{Name: ComponentPostgres, Plane: PlaneInfrastructure, SpecPath: "spec.infrastructure.postgres", Stateful: &infra.Postgres},
		{Name: ComponentRedis, Plane: PlaneInfrastructure, SpecPath: "spec.infrastructure.redis", Stateful: &infra.Redis.StatefulComponentSpec},
		{Name: ComponentMinio, Plane: PlaneInfrastructure, SpecPath: "spec.infrastructure.minio", Stateful: &infra.Minio},
		{Name: ComponentKafka, Plane: PlaneInfrastructure, SpecPath: "spec.infrastructure.kafka", Stateful: &infra.Kafka},
		{Name: ComponentOntologyService, Plane: PlaneControl, SpecPath: "spec.controlPlane.ontologyService", Service: &cp.OntologyService},
		{Name: ComponentSchemaRegistry, Plane: PlaneControl, SpecPath: "spec.controlPlane.schemaRegistry", Service: &cp.SchemaRegistry},
		{Name: ComponentAuthService, Plane: PlaneControl, SpecPath: "spec.controlPlane.authService", Service: &cp.AuthService},
		{Name: ComponentDataService, Plane: PlaneData, SpecPath: "spec.dataPlane.dataService", Service: &dp.DataService},
		{Name: ComponentNessie, Plane: PlaneData, SpecPath: "spec.dataPlane.nessie", Service: &dp.Nessie},
		{Name: ComponentReasoningService, Plane: PlaneIntelligence, SpecPath: "spec.intelligencePlane.reasoningService", Service: &ip.ReasoningService.ServiceSpec},
		{Name: ComponentAgentRuntime, Plane: PlaneIntelligence, SpecPath: "spec.intelligencePlane.agentRuntime", Service: &ip.AgentRuntime},
		{Name: ComponentGateway, Plane: PlaneGateway, SpecPath: "spec.gateway", Service: &s.Gateway.ServiceSpec},
	}
}

// Component returns the named component, or false when no component has that name.
func (s *OntoPlatformSpec) Component(name string) (Component, bool) {
	for _, c := range s.Components() {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// DesiredReplicas is the replica count the component should run: the spec's replicas,
// else autoscaling.minReplicas when autoscaling is on, else 1.
func (c Component) DesiredReplicas() int32 {
	if c.Stateful != nil {
		if c.Stateful.Replicas != nil {
			return *c.Stateful.Replicas
		}
		return 1
	}
	if c.Service.Replicas != nil {
		return *c.Service.Replicas
	}
	if a := c.Service.Autoscaling; a != nil && a.Enabled && a.MinReplicas > 0 {
		return a.MinReplicas
	}
	return 1
}

// Autoscaled reports whether a HorizontalPodAutoscaler owns the component's replicas.
func (c Component) Autoscaled() bool {
	return c.Service != nil && c.Service.Autoscaling != nil && c.Service.Autoscaling.Enabled
}
