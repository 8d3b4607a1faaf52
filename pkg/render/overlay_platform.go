/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"sigs.k8s.io/kustomize/api/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// tenancyOverlay renders the namespace the platform runs in, its NetworkPolicies and,
// with spec.tenancy.resourceQuota, its ResourceQuota. These objects belong to the
// platform as a whole, so their app.kubernetes.io/name is PartOf and they are named
// after the platform.
func (b *builder) tenancyOverlay() (*overlay, error) {
	o := newOverlay(string(v1alpha1.PlaneTenancy), v1alpha1.PlaneTenancy)
	// Labels on metadata only: the NetworkPolicies' selectors are written here and must
	// not gain the name label.
	o.k.Labels = []types.Label{{Pairs: b.platformLabels(v1alpha1.PlaneTenancy)}}

	ns := map[string]any{"name": b.p.Namespace}
	if psa := b.podSecurityLabels(); len(psa) > 0 {
		ns["labels"] = psa
	}
	if err := o.addObject("namespace.yaml", map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   ns,
	}); err != nil {
		return nil, err
	}

	if t := b.spec.Tenancy; t != nil && len(t.ResourceQuota) > 0 {
		if err := o.addObject("resourcequota.yaml", map[string]any{
			"apiVersion": "v1",
			"kind":       "ResourceQuota",
			"metadata":   map[string]any{"name": b.p.Name},
			"spec":       map[string]any{"hard": t.ResourceQuota},
		}); err != nil {
			return nil, err
		}
	}
	if err := b.addTLSCA(o); err != nil {
		return nil, err
	}
	policies, err := b.networkPolicies()
	if err != nil {
		return nil, err
	}
	for _, pol := range policies {
		if err := o.addObject("networkpolicy-"+pol.name+".yaml", pol.obj); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// podSecurityLabels are the namespace's Pod Security labels for spec.tenancy.podSecurity.
// Every pod of the platform passes the "restricted" standard, so by default the
// namespace enforces it: a user patch that weakens a pod fails loudly at admission.
// The version is pinned, not "latest": a cluster upgrade that tightens the standard
// must not start refusing the platform's pods before this tool has been tested with it.
func (b *builder) podSecurityLabels() map[string]string {
	var modes []string
	switch b.podSecurityMode() {
	case v1alpha1.PodSecurityNone:
		return nil
	case v1alpha1.PodSecurityWarn:
		modes = []string{"audit", "warn"}
	default:
		modes = []string{"enforce", "audit", "warn"}
	}
	psa := make(map[string]string, 2*len(modes))
	for _, mode := range modes {
		psa[podSecurityLabelPrefix+mode] = podSecurityLevel
		psa[podSecurityLabelPrefix+mode+"-version"] = PodSecurityVersion
	}
	return psa
}

// podSecurityMode is spec.tenancy.podSecurity, enforce when unset (the schema's default).
func (b *builder) podSecurityMode() v1alpha1.PodSecurityMode {
	if t := b.spec.Tenancy; t != nil && t.PodSecurity != "" {
		return t.PodSecurity
	}
	return v1alpha1.PodSecurityEnforce
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
