/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"slices"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// Namespaces the NetworkPolicies admit when the spec names none; the schema sets the
// same defaults, these cover a platform built in code without defaulting.
const (
	defaultIngressNamespace    = "ingress-nginx"
	defaultMonitoringNamespace = "monitoring"
)

// DNS is what every pod needs even when egress is denied: kube-dns in kube-system.
const (
	dnsNamespace = "kube-system"
	dnsPodLabel  = "k8s-app"
	dnsPodValue  = "kube-dns"
	dnsPort      = 53
)

// namedObject is a generated object and the file name it gets in its overlay.
type namedObject struct {
	name string
	obj  map[string]any
}

// networkSettings is spec.tenancy.networkPolicy with its defaults resolved.
type networkSettings struct {
	isolate    bool
	allowed    []string
	ingress    []string
	monitoring []string
	egress     bool
}

// networkSettings reads spec.tenancy.networkPolicy. A nil list falls back to the
// default; an empty one stays empty (the user admitted none).
func (b *builder) networkSettings() networkSettings {
	s := networkSettings{isolate: true, ingress: []string{defaultIngressNamespace}, monitoring: []string{defaultMonitoringNamespace}}
	if b.spec.Tenancy == nil || b.spec.Tenancy.NetworkPolicy == nil {
		return s
	}
	np := b.spec.Tenancy.NetworkPolicy
	s.isolate = enabled(np.Isolate)
	s.allowed = np.AllowedNamespaces
	if np.IngressNamespaces != nil {
		s.ingress = np.IngressNamespaces
	}
	if np.MonitoringNamespaces != nil {
		s.monitoring = np.MonitoringNamespaces
	}
	s.egress = np.Egress
	return s
}

// clientPorts are the ports a backing workload serves its clients on, from its
// Services (manifests/base); ports its peers use among themselves (Kafka's controller
// port, MinIO's console) are not for clients.
func clientPorts(workload string) []int {
	switch workload {
	case v1alpha1.ComponentPostgres:
		return []int{5432}
	case v1alpha1.ComponentRedis:
		return []int{6379}
	case v1alpha1.ComponentRedisSentinel:
		return []int{26379}
	case v1alpha1.ComponentKafka:
		return []int{9092}
	case v1alpha1.ComponentMinio:
		return []int{9000}
	default:
		return nil
	}
}

// backingUsedBy lists, by backing component, the clients that use it: the enabled
// platform services whose release catalog entry uses it (the addresses and credentials
// render gives them), and for a MinIO the platform runs the Job that creates the
// services' user with the root credentials. External services are listed too: their
// clients get an egress allowance.
func (b *builder) backingUsedBy() (map[string][]string, error) {
	out := map[string][]string{}
	for _, c := range b.spec.Components() {
		if c.Service == nil || !c.Enabled() {
			continue
		}
		used, err := b.usedBackingServices(c)
		if err != nil {
			return nil, fmt.Errorf("component %s (%s): %w", c.Name, c.SpecPath, err)
		}
		for _, backing := range release.BackingServices() {
			if used[backing] {
				out[backing] = append(out[backing], c.Name)
			}
		}
	}
	if minio, _ := b.spec.Component(v1alpha1.ComponentMinio); minio.Enabled() {
		out[v1alpha1.ComponentMinio] = append(out[v1alpha1.ComponentMinio], minioSetup)
	}
	return out, nil
}

// networkPolicies admit only the traffic the platform needs; everything else that
// reaches its pods is denied. Policies are additive, so each allowance is its own
// object and reads on its own in `kubectl get netpol`. The platform's pods are
// selected by their labels, not by an empty selector: the namespace may hold other
// workloads, whose traffic is not this platform's to decide.
//
// Kubelet probes come from the node, which NetworkPolicy implementations admit, so
// they need no rule.
func (b *builder) networkPolicies() ([]namedObject, error) {
	net := b.networkSettings()
	if !net.isolate {
		return nil, nil
	}
	platformPods := map[string]any{"matchLabels": map[string]string{LabelInstance: b.p.Name, LabelPartOf: PartOf}}
	policy := func(name string, spec map[string]any) namedObject {
		return namedObject{name: name, obj: map[string]any{
			"apiVersion": "networking.k8s.io/v1",
			"kind":       "NetworkPolicy",
			"metadata":   map[string]any{"name": b.p.Name + "-" + name},
			"spec":       spec,
		}}
	}
	ingressPolicy := func(name string, pods map[string]any, rules ...any) namedObject {
		return policy(name, map[string]any{"podSelector": pods, "policyTypes": []string{"Ingress"}, "ingress": rules})
	}

	out := []namedObject{policy("default-deny-ingress", map[string]any{
		"podSelector": platformPods,
		"policyTypes": []string{"Ingress"},
	})}

	// Each backing workload: its own pods among themselves on every port
	// (replication, quorum, the sentinels' gossip), and its clients on its client
	// ports only. Redis also admits its sentinels, which watch and reconfigure it.
	usedBy, err := b.backingUsedBy()
	if err != nil {
		return nil, err
	}
	for _, w := range b.backingWorkloads() {
		rules := []any{rule([]any{podsPeer(b.componentPods(w))}, nil)}
		if w == v1alpha1.ComponentRedis && b.sentinelMode() {
			rules = append(rules, rule([]any{podsPeer(b.componentPods(v1alpha1.ComponentRedisSentinel))}, tcpPorts(clientPorts(w)...)))
		}
		clients := usedBy[w]
		if w == v1alpha1.ComponentRedisSentinel {
			clients = usedBy[v1alpha1.ComponentRedis]
		}
		if w == v1alpha1.ComponentKafkaController {
			// The brokers register with and fetch metadata from the controllers;
			// the platform's services never talk to them.
			clients = nil
			rules = append(rules, rule([]any{podsPeer(b.componentPods(v1alpha1.ComponentKafka))}, tcpPorts(kafkaControllerPort)))
		}
		if len(clients) > 0 {
			rules = append(rules, rule([]any{podsPeer(b.componentPods(clients...))}, tcpPorts(clientPorts(w)...)))
		}
		out = append(out, ingressPolicy("allow-"+w, b.componentPods(w), rules...))
	}

	services := b.enabledServices()
	if len(services) > 0 {
		// The gateway calls every service over gRPC; services call each other on
		// their service ports, never on the metrics port.
		out = append(out, ingressPolicy("allow-services", b.componentPods(services...),
			rule([]any{podsPeer(b.componentPods(services...))}, tcpPorts(portHTTP, portGRPC))))
	}
	if slices.Contains(services, v1alpha1.ComponentGateway) && len(net.ingress) > 0 {
		// The ingress controller reaches the gateway's HTTP port, the Ingress's
		// backend, and no other pod. Rendered with or without spec.gateway.ingress:
		// the gateway is the platform's entry point whatever fronts it.
		out = append(out, ingressPolicy("allow-ingress", b.componentPods(v1alpha1.ComponentGateway),
			rule([]any{namespacesIn(net.ingress)}, tcpPorts(portHTTP))))
	}
	if b.metricsEnabled() && len(services) > 0 && len(net.monitoring) > 0 {
		// Only the platform services serve metrics; Prometheus reaches that port alone.
		out = append(out, ingressPolicy("allow-monitoring", b.componentPods(services...),
			rule([]any{namespacesIn(net.monitoring)}, tcpPorts(portMetrics))))
	}
	if len(net.allowed) > 0 {
		out = append(out, ingressPolicy("allow-namespaces", platformPods,
			rule([]any{namespacesIn(net.allowed)}, nil)))
	}

	if net.egress {
		out = append(out,
			policy("default-deny-egress", map[string]any{
				"podSelector": platformPods,
				"policyTypes": []string{"Egress"},
			}),
			policy("allow-egress", map[string]any{
				"podSelector": platformPods,
				"policyTypes": []string{"Egress"},
				"egress": []any{
					map[string]any{
						"to": []any{map[string]any{
							"namespaceSelector": map[string]any{"matchLabels": map[string]string{networkPolicyNSLabelKey: dnsNamespace}},
							"podSelector":       map[string]any{"matchLabels": map[string]string{dnsPodLabel: dnsPodValue}},
						}},
						"ports": []any{
							map[string]any{"protocol": "UDP", "port": dnsPort},
							map[string]any{"protocol": "TCP", "port": dnsPort},
						},
					},
					map[string]any{"to": []any{map[string]any{"podSelector": platformPods}}},
				},
			}))
		out = append(out, b.externalEgressPolicies(usedBy, policy)...)
	}
	return out, nil
}

// backingWorkloads are the enabled infrastructure workloads, in install order, the
// Redis sentinels included in sentinel mode and Kafka's dedicated controllers.
func (b *builder) backingWorkloads() []string {
	var out []string
	for _, c := range b.spec.Components() {
		if c.Stateful == nil || !c.Enabled() {
			continue
		}
		out = append(out, c.Name)
		if c.Name == v1alpha1.ComponentRedis && b.sentinelMode() {
			out = append(out, v1alpha1.ComponentRedisSentinel)
		}
		if c.Name == v1alpha1.ComponentKafka && KafkaDedicatedControllers(c.DesiredReplicas()) {
			out = append(out, v1alpha1.ComponentKafkaController)
		}
	}
	return out
}

// enabledServices are the enabled platform services, in install order.
func (b *builder) enabledServices() []string {
	var out []string
	for _, c := range b.spec.Components() {
		if c.Service != nil && c.Enabled() {
			out = append(out, c.Name)
		}
	}
	return out
}

func (b *builder) sentinelMode() bool {
	return b.spec.Infrastructure.Redis.Mode == v1alpha1.RedisSentinel
}

// componentPods selects the pods of the named components of this platform by the
// stable name and instance labels, which an upgrade's migration Jobs carry too.
func (b *builder) componentPods(names ...string) map[string]any {
	if len(names) == 1 {
		return map[string]any{"matchLabels": map[string]string{LabelName: names[0], LabelInstance: b.p.Name}}
	}
	return map[string]any{
		"matchLabels":      map[string]string{LabelInstance: b.p.Name},
		"matchExpressions": []any{map[string]any{"key": LabelName, "operator": "In", "values": names}},
	}
}

// podsPeer admits the pods selector selects in the platform's namespace.
func podsPeer(selector map[string]any) map[string]any {
	return map[string]any{"podSelector": selector}
}

// namespacesIn selects every pod of the named namespaces.
func namespacesIn(names []string) map[string]any {
	return map[string]any{"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
		"key":      networkPolicyNSLabelKey,
		"operator": "In",
		"values":   names,
	}}}}
}

// rule is one ingress rule: from any of peers, on ports (every port when nil).
func rule(peers []any, ports []any) map[string]any {
	r := map[string]any{"from": peers}
	if len(ports) > 0 {
		r["ports"] = ports
	}
	return r
}

func tcpPorts(ports ...int) []any {
	out := make([]any, 0, len(ports))
	for _, p := range ports {
		out = append(out, map[string]any{"protocol": "TCP", "port": p})
	}
	return out
}
