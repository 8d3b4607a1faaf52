/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Codes of the node, scaling and certificate checks.
const (
	CodeNodeNotReady  = "ONTO-NOD-301"
	CodeNodePressure  = "ONTO-NOD-302"
	CodeHPAInactive   = "ONTO-SCL-401"
	CodeHPAAtMax      = "ONTO-SCL-402"
	CodePDBBlocks     = "ONTO-SCL-403"
	CodeTLSMissing    = "ONTO-TLS-501"
	CodeTLSExpiry     = "ONTO-TLS-502"
	CodeTLSHostNames  = "ONTO-TLS-503"
	pressureCondition = "Pressure"
)

func nodeChecks() []Check {
	return []Check{
		{Code: CodeNodeNotReady, Category: CategoryNodes, Description: "nodes running the platform are Ready", Skip: needsPlatform, Run: checkNodeNotReady},
		{Code: CodeNodePressure, Category: CategoryNodes, Description: "no memory, disk or PID pressure", Pre: true, Run: checkNodePressure},
	}
}

func scalingChecks() []Check {
	return []Check{
		{Code: CodeHPAInactive, Category: CategoryScaling, Description: "autoscalers get their metrics", Skip: needsHPAs, Run: checkHPAInactive},
		{Code: CodeHPAAtMax, Category: CategoryScaling, Description: "autoscalers below maxReplicas", Skip: needsHPAs, Run: checkHPAAtMax},
		{Code: CodePDBBlocks, Category: CategoryScaling, Description: "disruption budgets allow a drain", Skip: needsPDBs, Run: checkPDBs},
	}
}

func tlsChecks() []Check {
	return []Check{
		{Code: CodeTLSMissing, Category: CategoryTLS, Description: "ingress TLS Secrets exist", Skip: needsCertificates, Run: checkTLSMissing},
		{Code: CodeTLSExpiry, Category: CategoryTLS, Description: "certificates valid and not about to expire", Skip: needsCertificates, Run: checkTLSExpiry},
		{Code: CodeTLSHostNames, Category: CategoryTLS, Description: "certificates name the ingress hosts", Skip: needsCertificates, Run: checkTLSHosts},
	}
}

// platformNodes are the nodes running a platform pod, by name.
func platformNodes(env *Env) map[string]bool {
	out := map[string]bool{}
	for i := range env.Pods {
		if n := env.Pods[i].Spec.NodeName; n != "" && env.Pods[i].DeletionTimestamp == nil {
			out[n] = true
		}
	}
	return out
}

func nodeCondition(node *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == typ {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func checkNodeNotReady(env *Env) []Finding {
	hosts := platformNodes(env)
	var out []Finding
	for i := range env.Nodes {
		node := &env.Nodes[i]
		if !hosts[node.Name] {
			continue
		}
		c := nodeCondition(node, corev1.NodeReady)
		if c != nil && c.Status == corev1.ConditionTrue {
			continue
		}
		ev := "no Ready condition"
		if c != nil {
			ev = fmt.Sprintf("Ready=%s for %s: %s", c.Status, age(env.Now, c.LastTransitionTime.Time), oneLine(c.Reason+" "+c.Message))
		}
		ev += fmt.Sprintf("; runs %d platform pods", podsOn(env, node.Name))
		out = append(out, Finding{Object: "node/" + node.Name, Evidence: ev,
			Fix: fmt.Sprintf("kubectl describe node %s; its pods are rescheduled after the eviction timeout, or drain it: kubectl drain %s --ignore-daemonsets", node.Name, node.Name)})
	}
	return out
}

func podsOn(env *Env, node string) int {
	n := 0
	for i := range env.Pods {
		if env.Pods[i].Spec.NodeName == node {
			n++
		}
	}
	return n
}

// nodePressure lists a node's pressure conditions that are True, "" when none.
func nodePressure(env *Env, name string) string {
	for i := range env.Nodes {
		if env.Nodes[i].Name != name {
			continue
		}
		var out []string
		for _, c := range env.Nodes[i].Status.Conditions {
			if strings.HasSuffix(string(c.Type), pressureCondition) && c.Status == corev1.ConditionTrue {
				out = append(out, string(c.Type))
			}
		}
		return strings.Join(out, ", ")
	}
	return ""
}

func checkNodePressure(env *Env) []Finding {
	hosts := platformNodes(env)
	var out []Finding
	for i := range env.Nodes {
		node := &env.Nodes[i]
		// Before an install every node may get the platform's pods.
		if env.Platform != nil && !hosts[node.Name] {
			continue
		}
		for _, c := range node.Status.Conditions {
			if !strings.HasSuffix(string(c.Type), pressureCondition) || c.Status != corev1.ConditionTrue {
				continue
			}
			out = append(out, Finding{Severity: SeverityWarning, Object: "node/" + node.Name,
				Evidence: fmt.Sprintf("%s for %s: %s", c.Type, age(env.Now, c.LastTransitionTime.Time), oneLine(c.Message)),
				Fix:      "the kubelet evicts pods under pressure: free or add capacity on the node"})
		}
	}
	return out
}

func needsHPAs(env *Env) string {
	if len(env.HPAs) == 0 {
		return "no autoscaled component"
	}
	return ""
}

func sortedHPAs(env *Env) []*autoscalingv2.HorizontalPodAutoscaler {
	out := make([]*autoscalingv2.HorizontalPodAutoscaler, len(env.HPAs))
	for i := range env.HPAs {
		out[i] = &env.HPAs[i]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == typ {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

func checkHPAInactive(env *Env) []Finding {
	var out []Finding
	for _, h := range sortedHPAs(env) {
		c := hpaCondition(h, autoscalingv2.ScalingActive)
		if c == nil || c.Status != corev1.ConditionFalse {
			continue
		}
		out = append(out, Finding{Severity: SeverityWarning, Object: "horizontalpodautoscaler/" + h.Name,
			Evidence: fmt.Sprintf("ScalingActive=False: %s: %s; it holds %d replicas", c.Reason, oneLine(c.Message), h.Status.CurrentReplicas),
			Fix:      "install a metrics API for its metrics (metrics-server for cpu and memory, an adapter for custom metrics), or turn the component's autoscaling off"})
	}
	return out
}

func checkHPAAtMax(env *Env) []Finding {
	var out []Finding
	for _, h := range sortedHPAs(env) {
		if h.Spec.MaxReplicas == 0 || h.Status.DesiredReplicas < h.Spec.MaxReplicas {
			continue
		}
		ev := fmt.Sprintf("at maxReplicas %d", h.Spec.MaxReplicas)
		if c := hpaCondition(h, autoscalingv2.ScalingLimited); c != nil && c.Status == corev1.ConditionTrue {
			ev += fmt.Sprintf(" (ScalingLimited: %s)", oneLine(c.Message))
		}
		out = append(out, Finding{Severity: SeverityWarning, Object: "horizontalpodautoscaler/" + h.Name, Evidence: ev,
			Fix: "raise the component's autoscaling.maxReplicas (kubectl onto scale NAME COMPONENT --max N), or its resources"})
	}
	return out
}

func needsPDBs(env *Env) string {
	if len(env.PDBs) == 0 {
		return "no disruption budget"
	}
	return ""
}

func checkPDBs(env *Env) []Finding {
	var out []Finding
	pdbs := slices.Clone(env.PDBs)
	sort.Slice(pdbs, func(i, j int) bool { return pdbs[i].Name < pdbs[j].Name })
	for _, p := range pdbs {
		if p.Status.DisruptionsAllowed > 0 || p.Status.ExpectedPods == 0 {
			continue
		}
		out = append(out, Finding{Severity: SeverityWarning, Object: "poddisruptionbudget/" + p.Name,
			Evidence: fmt.Sprintf("0 disruptions allowed (%d of %d pods healthy, %d required): a node drain blocks", p.Status.CurrentHealthy, p.Status.ExpectedPods, p.Status.DesiredHealthy),
			Fix:      "bring the component back to full strength, or run more replicas than the budget requires"})
	}
	return out
}

func needsCertificates(env *Env) string {
	if len(env.Certificates) == 0 {
		return "no Ingress with TLS"
	}
	return ""
}

func certObject(c Certificate) string { return "secret/" + c.Secret }

func checkTLSMissing(env *Env) []Finding {
	var out []Finding
	for _, c := range env.Certificates {
		switch {
		case c.Missing:
			out = append(out, Finding{Object: certObject(c),
				Evidence: fmt.Sprintf("ingress/%s serves %s with this Secret, which does not exist", c.Ingress, strings.Join(c.Hosts, ", ")),
				Fix:      "create the kubernetes.io/tls Secret (or let cert-manager issue it through spec.gateway.ingress annotations)"})
		case c.Error != "":
			out = append(out, Finding{Object: certObject(c), Evidence: c.Error,
				Fix: "store a PEM certificate under tls.crt"})
		}
	}
	return out
}

func checkTLSExpiry(env *Env) []Finding {
	var out []Finding
	for _, c := range env.Certificates {
		if c.Missing || c.Error != "" {
			continue
		}
		switch {
		case !env.Now.Before(c.NotAfter):
			out = append(out, Finding{Object: certObject(c),
				Evidence: fmt.Sprintf("expired %s ago (notAfter %s)", age(env.Now, c.NotAfter), c.NotAfter.UTC().Format("2006-01-02 15:04 MST")),
				Fix:      "renew the certificate and update the Secret"})
		case env.Now.Before(c.NotBefore):
			out = append(out, Finding{Object: certObject(c),
				Evidence: fmt.Sprintf("not valid before %s", c.NotBefore.UTC().Format("2006-01-02 15:04 MST")),
				Fix:      "check the issuer's clock, or wait until then"})
		case c.NotAfter.Sub(env.Now) < env.CertWarn:
			out = append(out, Finding{Severity: SeverityWarning, Object: certObject(c),
				Evidence: fmt.Sprintf("expires in %s (notAfter %s)", c.NotAfter.Sub(env.Now).Round(time.Hour), c.NotAfter.UTC().Format("2006-01-02 15:04 MST")),
				Fix:      "renew the certificate before then"})
		}
	}
	return out
}

func checkTLSHosts(env *Env) []Finding {
	var out []Finding
	for _, c := range env.Certificates {
		if c.Missing || c.Error != "" {
			continue
		}
		for _, h := range c.Hosts {
			if !certCovers(c.DNSNames, h) {
				out = append(out, Finding{Object: certObject(c),
					Evidence: fmt.Sprintf("host %s of ingress/%s is not among the certificate's names (%s)", h, c.Ingress, strings.Join(c.DNSNames, ", ")),
					Fix:      "issue the certificate for " + h + ", or correct spec.gateway.ingress.host"})
			}
		}
	}
	return out
}

// certCovers matches host against a certificate's DNS names, a leading "*." matching
// exactly one label, as TLS clients do.
func certCovers(names []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range names {
		n = strings.ToLower(n)
		if n == host {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if i := strings.IndexByte(host, '.'); i > 0 && host[i+1:] == rest {
				return true
			}
		}
	}
	return false
}
