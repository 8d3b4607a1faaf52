/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"reflect"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// notReadyNode is a node whose Ready condition is status since 3m.
func notReadyNode(name string, st corev1.ConditionStatus) corev1.Node {
	n := pressureNode(name)
	n.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: st,
		Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastTransitionTime: ago(3 * time.Minute)}
	return n
}

func TestNodeNotReadyCheck(t *testing.T) {
	runCases(t, []checkCase{
		{name: "no platform", code: CodeNodeNotReady, setup: noPlatform, skip: "no installed platform"},
		{name: "ready", code: CodeNodeNotReady, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{pressureNode("node-1")}
		}},
		{name: "not ready, hosting a platform pod", code: CodeNodeNotReady, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{notReadyNode("node-1", corev1.ConditionUnknown), pressureNode("node-2")}
		}, want: []wantFinding{{severity: SeverityError, object: "node/node-1",
			evidence: []string{"Ready=Unknown for 3m: NodeStatusUnknown Kubelet stopped posting node status.", "runs 1 platform pods"},
			fix:      []string{"kubectl describe node node-1", "kubectl drain node-1 --ignore-daemonsets"}}}},
		{name: "no Ready condition", code: CodeNodeNotReady, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}
		}, want: []wantFinding{{severity: SeverityError, object: "node/node-1", evidence: []string{"no Ready condition; runs 1 platform pods"}}}},
		{name: "not ready, no platform pod", code: CodeNodeNotReady, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{pressureNode("node-1"), notReadyNode("node-3", corev1.ConditionFalse)}
		}},
		{name: "not ready, only a terminating platform pod", code: CodeNodeNotReady, setup: func(e *Env) {
			withPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptrTime(ago(time.Minute)) })(e)
			e.Nodes = []corev1.Node{notReadyNode("node-1", corev1.ConditionFalse)}
		}},
	})
}

func TestNodePressureCheck(t *testing.T) {
	runCases(t, []checkCase{
		{name: "no pressure", code: CodeNodePressure, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{pressureNode("node-1"), pressureNode("node-2")}
		}},
		{name: "memory pressure on a hosting node", code: CodeNodePressure, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{pressureNode("node-1", corev1.NodeMemoryPressure), pressureNode("node-2", corev1.NodeDiskPressure)}
		}, want: []wantFinding{{severity: SeverityWarning, object: "node/node-1",
			evidence: []string{"MemoryPressure for 20m: kubelet has MemoryPressure"}, fix: []string{"free or add capacity"}}}},
		{name: "two pressures", code: CodeNodePressure, setup: func(e *Env) {
			healthyPod(e)
			e.Nodes = []corev1.Node{pressureNode("node-1", corev1.NodeDiskPressure, corev1.NodePIDPressure)}
		}, want: []wantFinding{
			{severity: SeverityWarning, object: "node/node-1", evidence: []string{"DiskPressure"}},
			{severity: SeverityWarning, object: "node/node-1", evidence: []string{"PIDPressure"}},
		}},
		{name: "before an install any node counts", code: CodeNodePressure, setup: func(e *Env) {
			e.Platform, e.Pre, e.NamespaceExists = nil, true, false
			e.Nodes = []corev1.Node{pressureNode("node-1"), pressureNode("node-2", corev1.NodeDiskPressure)}
		}, want: []wantFinding{{severity: SeverityWarning, object: "node/node-2", evidence: []string{"DiskPressure for 20m"}}}},
	})
}

func testHPA(name string, desired, maxReplicas int32, conds ...autoscalingv2.HorizontalPodAutoscalerCondition) autoscalingv2.HorizontalPodAutoscaler {
	return autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptrInt32(2), MaxReplicas: maxReplicas},
		Status:     autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: desired, DesiredReplicas: desired, Conditions: conds},
	}
}

func ptrInt32(v int32) *int32 { return &v }

func hpaCond(typ autoscalingv2.HorizontalPodAutoscalerConditionType, st corev1.ConditionStatus, reason, msg string) autoscalingv2.HorizontalPodAutoscalerCondition {
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ, Status: st, Reason: reason, Message: msg}
}

func TestHPAChecks(t *testing.T) {
	active := hpaCond(autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "")
	runCases(t, []checkCase{
		{name: "no autoscaler", code: CodeHPAInactive, skip: "no autoscaled component"},
		{name: "no autoscaler", code: CodeHPAAtMax, skip: "no autoscaled component"},
		{name: "active", code: CodeHPAInactive, setup: func(e *Env) {
			e.HPAs = []autoscalingv2.HorizontalPodAutoscaler{testHPA("gateway", 2, 5, active)}
		}},
		{name: "no metrics", code: CodeHPAInactive, setup: func(e *Env) {
			e.HPAs = []autoscalingv2.HorizontalPodAutoscaler{testHPA("gateway", 2, 5, hpaCond(autoscalingv2.ScalingActive, corev1.ConditionFalse,
				"FailedGetResourceMetric", "the HPA was unable to compute the replica count: unable to get metrics for resource cpu"))}
		}, want: []wantFinding{{severity: SeverityWarning, object: "horizontalpodautoscaler/gateway",
			evidence: []string{"ScalingActive=False: FailedGetResourceMetric: the HPA was unable to compute the replica count", "it holds 2 replicas"},
			fix:      []string{"metrics-server"}}}},
		{name: "below max", code: CodeHPAAtMax, setup: func(e *Env) {
			e.HPAs = []autoscalingv2.HorizontalPodAutoscaler{testHPA("gateway", 4, 5, active)}
		}},
		{name: "at max", code: CodeHPAAtMax, setup: func(e *Env) {
			e.HPAs = []autoscalingv2.HorizontalPodAutoscaler{
				testHPA("reasoning-service", 3, 8, active),
				testHPA("gateway", 5, 5, active, hpaCond(autoscalingv2.ScalingLimited, corev1.ConditionTrue,
					"TooManyReplicas", "the desired replica count is more than the maximum replica count")),
			}
		}, want: []wantFinding{{severity: SeverityWarning, object: "horizontalpodautoscaler/gateway",
			evidence: []string{"at maxReplicas 5 (ScalingLimited: the desired replica count is more than the maximum replica count)"},
			fix:      []string{"autoscaling.maxReplicas", "kubectl onto scale"}}}},
		{name: "at max, not limited", code: CodeHPAAtMax, setup: func(e *Env) {
			e.HPAs = []autoscalingv2.HorizontalPodAutoscaler{testHPA("gateway", 5, 5, active)}
		}, want: []wantFinding{{severity: SeverityWarning, object: "horizontalpodautoscaler/gateway",
			evidence: []string{"at maxReplicas 5"}, notEvidence: []string{"ScalingLimited"}}}},
	})
}

func testPDB(name string, allowed, healthy, desired, expected int32) policyv1.PodDisruptionBudget {
	return policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected}}
}

func TestPDBCheck(t *testing.T) {
	runCases(t, []checkCase{
		{name: "no budget", code: CodePDBBlocks, skip: "no disruption budget"},
		{name: "a disruption allowed", code: CodePDBBlocks, setup: func(e *Env) {
			e.PDBs = []policyv1.PodDisruptionBudget{testPDB("gateway", 1, 2, 1, 2)}
		}},
		{name: "no pods expected", code: CodePDBBlocks, setup: func(e *Env) {
			e.PDBs = []policyv1.PodDisruptionBudget{testPDB("gateway", 0, 0, 1, 0)}
		}},
		{name: "blocks a drain", code: CodePDBBlocks, setup: func(e *Env) {
			e.PDBs = []policyv1.PodDisruptionBudget{testPDB("postgres", 1, 3, 2, 3), testPDB("gateway", 0, 1, 1, 2)}
		}, want: []wantFinding{{severity: SeverityWarning, object: "poddisruptionbudget/gateway",
			evidence: []string{"0 disruptions allowed (1 of 2 pods healthy, 1 required): a node drain blocks"},
			fix:      []string{"full strength", "more replicas"}}}},
	})
}

// TestChecksLeaveEnvUnchanged runs every check over one Env holding something for each
// and compares it with a second copy built the same way: checks are pure.
func TestChecksLeaveEnvUnchanged(t *testing.T) {
	build := func() *Env {
		e := installedEnv()
		withPod(oomKilled(time.Minute, "512Mi"))(e)
		e.Pods = append(e.Pods, testPod("auth-service-0", "auth-service"))
		e.Nodes = []corev1.Node{pressureNode("node-2", corev1.NodeDiskPressure), pressureNode("node-1")}
		e.HPAs = []autoscalingv2.HorizontalPodAutoscaler{testHPA("reasoning-service", 8, 8), testHPA("gateway", 5, 5)}
		e.PDBs = []policyv1.PodDisruptionBudget{testPDB("postgres", 0, 2, 3, 3), testPDB("gateway", 0, 1, 1, 2)}
		e.Certificates = []Certificate{
			{Secret: "z-tls", Hosts: []string{"z.example.com"}, NotAfter: fixedNow.Add(-time.Hour)},
			{Secret: "a-tls", Missing: true, Hosts: []string{"a.example.com"}},
		}
		return e
	}
	env, want := build(), build()
	health := []Category{CategoryPlatform, CategoryWorkloads, CategoryNodes, CategoryScaling, CategoryTLS}
	for _, c := range Select(All(), false, health, nil) {
		runCheck(env, c)
	}
	if !reflect.DeepEqual(env, want) {
		t.Error("a check changed the Env it looked at")
	}
}

func cert(secret string, notAfter time.Duration, names []string, hosts ...string) Certificate {
	return Certificate{Secret: secret, Ingress: "gateway", DNSNames: names, Hosts: hosts,
		NotBefore: fixedNow.Add(-30 * 24 * time.Hour), NotAfter: fixedNow.Add(notAfter)}
}

func TestTLSChecks(t *testing.T) {
	const year = 365 * 24 * time.Hour
	good := cert("onto-tls", year, []string{"onto.example.com"}, "onto.example.com")
	withCerts := func(cs ...Certificate) func(e *Env) {
		return func(e *Env) { e.Certificates = cs }
	}
	runCases(t, []checkCase{
		{name: "no TLS", code: CodeTLSMissing, skip: "no Ingress with TLS"},
		{name: "no TLS", code: CodeTLSExpiry, skip: "no Ingress with TLS"},
		{name: "no TLS", code: CodeTLSHostNames, skip: "no Ingress with TLS"},

		{name: "present", code: CodeTLSMissing, setup: withCerts(good)},
		{name: "missing Secret", code: CodeTLSMissing, setup: withCerts(good,
			Certificate{Secret: "api-tls", Missing: true, Ingress: "gateway", Hosts: []string{"api.example.com", "onto.example.com"}}),
			want: []wantFinding{{severity: SeverityError, object: "secret/api-tls",
				evidence: []string{"ingress/gateway serves api.example.com, onto.example.com with this Secret, which does not exist"},
				fix:      []string{"create the kubernetes.io/tls Secret", "cert-manager"}}}},
		{name: "unparsable certificate", code: CodeTLSMissing, setup: withCerts(
			Certificate{Secret: "onto-tls", Error: "tls.crt holds no PEM certificate", Ingress: "gateway"}),
			want: []wantFinding{{severity: SeverityError, object: "secret/onto-tls",
				evidence: []string{"tls.crt holds no PEM certificate"}, fix: []string{"PEM certificate under tls.crt"}}}},

		{name: "valid for a year", code: CodeTLSExpiry, setup: withCerts(good)},
		{name: "expired", code: CodeTLSExpiry, setup: withCerts(cert("onto-tls", -48*time.Hour, []string{"onto.example.com"})),
			want: []wantFinding{{severity: SeverityError, object: "secret/onto-tls",
				evidence: []string{"expired 2d ago (notAfter 2026-11-28 12:00 UTC)"}, fix: []string{"renew the certificate"}}}},
		{name: "expires now", code: CodeTLSExpiry, setup: withCerts(cert("onto-tls", 0, nil)),
			want: []wantFinding{{severity: SeverityError, object: "secret/onto-tls", evidence: []string{"expired"}}}},
		{name: "expiring within --cert-warn", code: CodeTLSExpiry, setup: withCerts(cert("onto-tls", 5*24*time.Hour, nil)),
			want: []wantFinding{{severity: SeverityWarning, object: "secret/onto-tls",
				evidence: []string{"expires in 120h", "notAfter 2026-12-05 12:00 UTC"}, fix: []string{"renew the certificate before then"}}}},
		{name: "beyond --cert-warn", code: CodeTLSExpiry, setup: withCerts(cert("onto-tls", 15*24*time.Hour, nil))},
		{name: "not valid yet", code: CodeTLSExpiry, setup: func(e *Env) {
			c := cert("onto-tls", year, nil)
			c.NotBefore = fixedNow.Add(24 * time.Hour)
			e.Certificates = []Certificate{c}
		}, want: []wantFinding{{severity: SeverityError, object: "secret/onto-tls", evidence: []string{"not valid before 2026-12-01 12:00 UTC"}}}},
		{name: "missing Secret is TLS-501's", code: CodeTLSExpiry, setup: withCerts(Certificate{Secret: "api-tls", Missing: true})},

		{name: "host named", code: CodeTLSHostNames, setup: withCerts(good)},
		{name: "host not named", code: CodeTLSHostNames, setup: withCerts(cert("onto-tls", year, []string{"onto.example.com", "www.example.com"}, "onto.example.com", "api.example.com")),
			want: []wantFinding{{severity: SeverityError, object: "secret/onto-tls",
				evidence: []string{"host api.example.com of ingress/gateway is not among the certificate's names (onto.example.com, www.example.com)"},
				fix:      []string{"issue the certificate for api.example.com", "spec.gateway.ingress.host"}}}},
		{name: "wildcard covers one label", code: CodeTLSHostNames, setup: withCerts(cert("onto-tls", year, []string{"*.example.com"}, "onto.example.com"))},
		{name: "wildcard does not cover two labels", code: CodeTLSHostNames, setup: withCerts(cert("onto-tls", year, []string{"*.example.com"}, "onto.example.com", "a.b.example.com")),
			want: []wantFinding{{severity: SeverityError, object: "secret/onto-tls", evidence: []string{"host a.b.example.com of ingress/gateway"}}}},
		{name: "missing Secret is TLS-501's", code: CodeTLSHostNames, setup: withCerts(Certificate{Secret: "api-tls", Missing: true, Hosts: []string{"api.example.com"}})},
	})
}

func TestCertCovers(t *testing.T) {
	for _, tc := range []struct {
		names []string
		host  string
		want  bool
	}{
		{[]string{"onto.example.com"}, "onto.example.com", true},
		{[]string{"Onto.Example.com"}, "onto.example.COM.", true},
		{[]string{"*.example.com"}, "onto.example.com", true},
		{[]string{"*.example.com"}, "a.b.example.com", false},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"*.example.com"}, ".example.com", false},
		{[]string{"example.com"}, "onto.example.com", false},
		{nil, "onto.example.com", false},
	} {
		if got := certCovers(tc.names, tc.host); got != tc.want {
			t.Errorf("certCovers(%v, %q) = %v, want %v", tc.names, tc.host, got, tc.want)
		}
	}
}
