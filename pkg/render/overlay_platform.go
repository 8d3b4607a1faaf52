/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"sigs.k8s.io/kustomize/api/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// tenancyOverlay renders the namespace the platform runs in and, with spec.tenancy, its
// ResourceQuota and NetworkPolicies. These objects belong to the platform as a whole, so
// their app.kubernetes.io/name is PartOf and they are named after the platform.
func (b *builder) tenancyOverlay() (*overlay, error) {
	o := newOverlay(string(v1alpha1.PlaneTenancy), v1alpha1.PlaneTenancy)
	// Labels on metadata only: the NetworkPolicies' selectors are written here and must
	// not gain the name label.
	o.k.Labels = []types.Label{{Pairs: b.platformLabels(v1alpha1.PlaneTenancy)}}

	// Every pod of the platform passes the "restricted" Pod Security Standard, so the
	// namespace enforces it: a user patch that weakens a pod fails loudly at admission.
	psa := map[string]string{}
	for _, mode := range []string{"enforce", "audit", "warn"} {
		psa[podSecurityLabelPrefix+mode] = podSecurityLevel
		psa[podSecurityLabelPrefix+mode+"-version"] = "latest"
	}
	if err := o.addObject("namespace.yaml", map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": b.p.Namespace, "labels": psa},
	}); err != nil {
		return nil, err
	}

	t := b.spec.Tenancy
	if t == nil {
		return o, nil
	}
	if len(t.ResourceQuota) > 0 {
		if err := o.addObject("resourcequota.yaml", map[string]any{
			"apiVersion": "v1",
			"kind":       "ResourceQuota",
			"metadata":   map[string]any{"name": b.p.Name},
			"spec":       map[string]any{"hard": t.ResourceQuota},
		}); err != nil {
			return nil, err
		}
	}
	if np := t.NetworkPolicy; np != nil && np.Isolate {
		for _, pol := range b.networkPolicies(np) {
			if err := o.addObject("networkpolicy-"+pol.name+".yaml", pol.obj); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

type namedObject struct {
	name string
	obj  map[string]any
}

// networkPolicies deny all ingress to the namespace, then allow the platform's own pods
// and the allowed namespaces. Policies are additive, so each allowance is its own object
// and reads on its own in `kubectl get netpol`.
func (b *builder) networkPolicies(np *v1alpha1.NetworkPolicySpec) []namedObject {
	platformPods := map[string]any{"matchLabels": map[string]string{LabelInstance: b.p.Name, LabelPartOf: PartOf}}
	policy := func(name string, spec map[string]any) namedObject {
		return namedObject{name: name, obj: map[string]any{
			"apiVersion": "networking.k8s.io/v1",
			"kind":       "NetworkPolicy",
			"metadata":   map[string]any{"name": b.p.Name + "-" + name},
			"spec":       spec,
		}}
	}
	out := []namedObject{
		policy("default-deny-ingress", map[string]any{
			"podSelector": map[string]any{},
			"policyTypes": []string{"Ingress"},
		}),
		policy("allow-platform", map[string]any{
			"podSelector": platformPods,
			"policyTypes": []string{"Ingress"},
			"ingress":     []any{map[string]any{"from": []any{map[string]any{"podSelector": platformPods}}}},
		}),
	}
	if len(np.AllowedNamespaces) > 0 {
		out = append(out, policy("allow-namespaces", map[string]any{
			"podSelector": platformPods,
			"policyTypes": []string{"Ingress"},
			"ingress": []any{map[string]any{"from": []any{map[string]any{
				"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
					"key":      networkPolicyNSLabelKey,
					"operator": "In",
					"values":   np.AllowedNamespaces,
				}}},
			}}}},
		}))
	}
	return out
}

// observabilityOverlay renders the ServiceMonitor that has Prometheus scrape the
// metrics port of every platform Service, or nothing when it is not wanted.
func (b *builder) observabilityOverlay() (*overlay, error) {
	m := b.spec.Observability.Metrics
	if !b.metricsEnabled() || !m.ServiceMonitor {
		return nil, nil
	}
	o := newOverlay(string(v1alpha1.PlaneObservability), v1alpha1.PlaneObservability)
	o.k.Labels = []types.Label{{Pairs: b.platformLabels(v1alpha1.PlaneObservability)}}
	// Only the platform services have a port named metrics; the infrastructure's
	// Services match the selector but have no such endpoint, so they are not scraped.
	err := o.addObject("servicemonitor.yaml", map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "ServiceMonitor",
		"metadata":   map[string]any{"name": b.p.Name},
		"spec": map[string]any{
			"selector":          map[string]any{"matchLabels": map[string]string{LabelInstance: b.p.Name, LabelPartOf: PartOf}},
			"namespaceSelector": map[string]any{"matchNames": []string{b.p.Namespace}},
			"endpoints": []any{map[string]any{
				"port":     "metrics",
				"path":     "/metrics",
				"interval": orDefault(m.Interval, defaultScrapeInterval),
			}},
		},
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// platformLabels are the recommended labels of objects that belong to the whole
// platform rather than one component.
func (b *builder) platformLabels(plane v1alpha1.Plane) map[string]string {
	return map[string]string{
		LabelName:      PartOf,
		LabelInstance:  b.p.Name,
		LabelComponent: string(plane),
		LabelPartOf:    PartOf,
		LabelVersion:   b.spec.Version,
		LabelManagedBy: ManagedBy,
	}
}
