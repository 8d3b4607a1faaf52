/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Properties of the NetworkPolicies over every example and profile, judged by a small
// evaluator of the policies' ingress rules (below the tests).

// containerPorts are the TCP ports a pod template's containers declare.
func containerPorts(tpl corev1.PodTemplateSpec) []int {
	var out []int
	for _, c := range tpl.Spec.Containers {
		for _, p := range c.Ports {
			out = append(out, int(p.ContainerPort))
		}
	}
	return out
}

// TestNetworkPoliciesCoverEveryPod: for every example and profile, every pod is
// selected by a NetworkPolicy that admits ingress (so none is left open, and none is
// shut entirely); a pod of another workload of the namespace reaches no port of it;
// and the ingress controller's namespaces reach the gateway's HTTP port and nothing
// else.
func TestNetworkPoliciesCoverEveryPod(t *testing.T) {
	for name, in := range everyInput(t) {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, in.p, in.rel)
			nps := networkPoliciesOf(t, objs)
			ns := in.p.Namespace
			np := in.p.Spec.Tenancy.NetworkPolicy
			tpls := podTemplates(t, objs)
			if _, ok := tpls["Deployment/"+v1alpha1.ComponentGateway]; !ok || len(np.IngressNamespaces) == 0 {
				t.Fatalf("input without a gateway or an ingress namespace (%v) proves nothing", np.IngressNamespaces)
			}
			for id, tpl := range tpls {
				selecting := nps.selecting(t, ns, tpl.Labels)
				admitting := false
				for _, pol := range selecting {
					admitting = admitting || len(pol.Spec.Ingress) > 0
				}
				switch {
				case len(selecting) == 0:
					t.Errorf("%s: selected by no NetworkPolicy", id)
				case !admitting && len(containerPorts(tpl)) > 0:
					// A pod that serves no port (a Job) is left to the default deny.
					t.Errorf("%s: selected by no NetworkPolicy that admits ingress", id)
				}
				outsider := peer{namespace: ns, labels: map[string]string{"app": "other"}}
				for _, port := range containerPorts(tpl) {
					if nps.admits(t, ns, tpl.Labels, outsider, port) {
						t.Errorf("%s: another workload of the namespace reaches port %d", id, port)
					}
					for _, ingressNS := range np.IngressNamespaces {
						controller := peer{namespace: ingressNS, labels: map[string]string{LabelName: "ingress-nginx"}}
						want := id == "Deployment/"+v1alpha1.ComponentGateway && port == portHTTP
						if got := nps.admits(t, ns, tpl.Labels, controller, port); got != want {
							t.Errorf("%s: port %d admitted from ingress namespace %s: %v, want %v", id, port, ingressNS, got, want)
						}
					}
				}
			}
		})
	}
}

// TestMonitoringReachesOnlyMetricsPorts: the monitoring namespaces reach the metrics
// port of every platform service, and no other port of any pod.
func TestMonitoringReachesOnlyMetricsPorts(t *testing.T) {
	for name, in := range everyInput(t) {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, in.p, in.rel)
			nps := networkPoliciesOf(t, objs)
			monitoring := in.p.Spec.Tenancy.NetworkPolicy.MonitoringNamespaces
			if len(monitoring) == 0 {
				t.Fatal("no monitoring namespace: the test proves nothing")
			}
			for id, tpl := range podTemplates(t, objs) {
				for _, port := range containerPorts(tpl) {
					for _, mns := range monitoring {
						prometheus := peer{namespace: mns, labels: map[string]string{LabelName: "prometheus"}}
						want := port == portMetrics && strings.HasPrefix(id, "Deployment/")
						if got := nps.admits(t, in.p.Namespace, tpl.Labels, prometheus, port); got != want {
							t.Errorf("%s: port %d admitted from monitoring namespace %s: %v, want %v", id, port, mns, got, want)
						}
					}
				}
			}
		})
	}
}

// TestServicesReachWhatTheyUse: every platform service reaches the client ports of
// the backing workloads its release catalog entry uses (the addresses its
// configuration gives it; the sentinels with redis) and no other of their ports, and
// the other services' HTTP and gRPC ports but not their metrics; a backing workload's
// pods reach each other on every port (replication, quorum).
func TestServicesReachWhatTheyUse(t *testing.T) {
	for name, in := range everyInput(t) {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, in.p, in.rel)
			nps := networkPoliciesOf(t, objs)
			ns := in.p.Namespace
			tpls := podTemplates(t, objs)
			for dstID, dst := range tpls {
				workload := dst.Labels[LabelName]
				for _, port := range containerPorts(dst) {
					if strings.HasPrefix(dstID, "StatefulSet/") && !nps.admits(t, ns, dst.Labels, peer{namespace: ns, labels: dst.Labels}, port) {
						t.Errorf("%s: its own pods do not reach each other on port %d", dstID, port)
					}
					for srcID, src := range tpls {
						if !strings.HasPrefix(srcID, "Deployment/") {
							continue
						}
						var want bool
						if strings.HasPrefix(dstID, "Deployment/") {
							want = port == portHTTP || port == portGRPC
						} else {
							backing := strings.TrimSuffix(workload, "-sentinel")
							want = slices.Contains(clientPorts(workload), port) && slices.Contains(enabledUses(t, in.p, in.rel, src.Labels[LabelName]), backing)
						}
						if got := nps.admits(t, ns, dst.Labels, peer{namespace: ns, labels: src.Labels}, port); got != want {
							t.Errorf("%s → %s port %d: admitted %v, want %v", srcID, dstID, port, got, want)
						}
					}
				}
			}
		})
	}
}

// TestNetworkPolicyOptOutAndEgress: isolate: false renders no NetworkPolicy; egress:
// true denies the platform's egress but DNS to kube-dns and its own pods.
func TestNetworkPolicyOptOutAndEgress(t *testing.T) {
	p, rel := production(t)
	p.Spec.Tenancy = &v1alpha1.TenancySpec{NetworkPolicy: &v1alpha1.NetworkPolicySpec{Isolate: ptr.To(false)}}
	for _, u := range mustRender(t, p, rel) {
		if u.GetKind() == "NetworkPolicy" {
			t.Errorf("isolate: false renders NetworkPolicy %s", u.GetName())
		}
	}

	p.Spec.Tenancy.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Egress: true}
	var egress []networkingv1.NetworkPolicy
	for _, np := range networkPoliciesOf(t, mustRender(t, p, rel)) {
		if slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			egress = append(egress, np)
		}
	}
	var dns, own bool
	for _, np := range egress {
		if !matches(t, &np.Spec.PodSelector, map[string]string{LabelInstance: p.Name, LabelPartOf: PartOf, LabelName: "gateway"}) {
			t.Errorf("%s does not select the platform's pods", np.Name)
		}
		for _, r := range np.Spec.Egress {
			for _, to := range r.To {
				switch {
				case to.NamespaceSelector != nil && to.PodSelector != nil &&
					matches(t, to.NamespaceSelector, map[string]string{networkPolicyNSLabelKey: "kube-system"}) &&
					matches(t, to.PodSelector, map[string]string{"k8s-app": "kube-dns"}):
					var protocols []string
					for _, port := range r.Ports {
						if port.Port.IntValue() == 53 {
							protocols = append(protocols, string(*port.Protocol))
						}
					}
					slices.Sort(protocols)
					dns = slices.Equal(protocols, []string{"TCP", "UDP"})
				case to.NamespaceSelector == nil && to.PodSelector != nil &&
					matches(t, to.PodSelector, map[string]string{LabelInstance: p.Name, LabelPartOf: PartOf, LabelName: "postgres"}):
					own = true
				}
			}
		}
	}
	if len(egress) != 2 || !dns || !own {
		t.Errorf("egress policies %d (want a deny and an allow), DNS on UDP+TCP 53 to kube-dns %v, own pods %v", len(egress), dns, own)
	}
}

// peer is the source of a connection: a pod's labels and its namespace.
type peer struct {
	namespace string
	labels    map[string]string
}

// netPolicies are the rendered NetworkPolicies of one platform, judged as a
// NetworkPolicy implementation judges them (ingress only).
type netPolicies []networkingv1.NetworkPolicy

func networkPoliciesOf(t testing.TB, objs []*unstructured.Unstructured) netPolicies {
	t.Helper()
	var out netPolicies
	for _, u := range objs {
		if u.GetKind() == "NetworkPolicy" {
			out = append(out, *convert[networkingv1.NetworkPolicy](t, u))
		}
	}
	return out
}

// selecting are the policies of Ingress type that select a pod of namespace ns.
func (nps netPolicies) selecting(t testing.TB, ns string, pod map[string]string) []networkingv1.NetworkPolicy {
	t.Helper()
	var out []networkingv1.NetworkPolicy
	for _, np := range nps {
		if np.Namespace != ns || !hasIngressType(np) {
			continue
		}
		if matches(t, &np.Spec.PodSelector, pod) {
			out = append(out, np)
		}
	}
	return out
}

// admits reports whether a TCP connection from src to port of a pod of namespace ns
// with labels pod is allowed: the pod is selected by no Ingress policy, or one of
// those that select it has a rule admitting src on port.
func (nps netPolicies) admits(t testing.TB, ns string, pod map[string]string, src peer, port int) bool {
	t.Helper()
	selecting := nps.selecting(t, ns, pod)
	if len(selecting) == 0 {
		return true
	}
	for _, np := range selecting {
		for _, r := range np.Spec.Ingress {
			if fromMatches(t, np.Namespace, r.From, src) && portMatches(r.Ports, port) {
				return true
			}
		}
	}
	return false
}

func hasIngressType(np networkingv1.NetworkPolicy) bool {
	for _, pt := range np.Spec.PolicyTypes {
		if pt == networkingv1.PolicyTypeIngress {
			return true
		}
	}
	return len(np.Spec.PolicyTypes) == 0
}

func fromMatches(t testing.TB, policyNS string, from []networkingv1.NetworkPolicyPeer, src peer) bool {
	if len(from) == 0 {
		return true
	}
	for _, f := range from {
		nsOK := src.namespace == policyNS
		if f.NamespaceSelector != nil {
			nsOK = matches(t, f.NamespaceSelector, map[string]string{networkPolicyNSLabelKey: src.namespace})
		}
		podOK := f.PodSelector == nil || matches(t, f.PodSelector, src.labels)
		if f.IPBlock == nil && nsOK && podOK {
			return true
		}
	}
	return false
}

func portMatches(ports []networkingv1.NetworkPolicyPort, port int) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if (p.Protocol == nil || *p.Protocol == "TCP") && p.Port != nil && p.Port.IntValue() == port {
			return true
		}
	}
	return false
}

func matches(t testing.TB, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(l))
}
