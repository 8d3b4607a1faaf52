/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

const preNS = "onto-system"

// preRL builds a ResourceList from name, quantity pairs.
func preRL(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// preMap is preRL as an unstructured map.
func preMap(kv ...string) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// preWorkloadObj is a Deployment or StatefulSet of component name, with replicas
// (negative: left out, as when autoscaled) and one container requesting requests.
func preWorkloadObj(kind, name string, replicas int64, requests map[string]any, mods ...func(map[string]any)) *unstructured.Unstructured {
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{v1alpha1.LabelName: name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{v1alpha1.LabelName: name}},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": name, "image": "example/" + name,
				"resources": map[string]any{"requests": requests},
			}}},
		},
	}
	if replicas >= 0 {
		spec["replicas"] = replicas
	}
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": preNS, "labels": map[string]any{v1alpha1.LabelName: name}},
		"spec":     spec,
	}
	for _, m := range mods {
		m(obj)
	}
	return &unstructured.Unstructured{Object: obj}
}

func preDeploy(name string, replicas int64, requests map[string]any, mods ...func(map[string]any)) *unstructured.Unstructured {
	return preWorkloadObj("Deployment", name, replicas, requests, mods...)
}

func preContainer0(obj map[string]any) map[string]any {
	cs, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	return cs[0].(map[string]any)
}

func preWithLimits(limits map[string]any) func(map[string]any) {
	return func(obj map[string]any) {
		c := preContainer0(obj)
		c["resources"].(map[string]any)["limits"] = limits
		_ = unstructured.SetNestedSlice(obj, []any{c}, "spec", "template", "spec", "containers")
	}
}

func preWithMaxSurge(v any) func(map[string]any) {
	return func(obj map[string]any) {
		_ = unstructured.SetNestedField(obj, v, "spec", "strategy", "rollingUpdate", "maxSurge")
	}
}

func preWithNodeSelector(k, v string) func(map[string]any) {
	return func(obj map[string]any) {
		_ = unstructured.SetNestedField(obj, v, "spec", "template", "spec", "nodeSelector", k)
	}
}

func preWithToleration(key string) func(map[string]any) {
	return func(obj map[string]any) {
		_ = unstructured.SetNestedSlice(obj, []any{map[string]any{"key": key, "operator": "Exists", "effect": "NoSchedule"}},
			"spec", "template", "spec", "tolerations")
	}
}

// preWithClaim adds a volumeClaimTemplate asking for class (nil: no class named).
func preWithClaim(class any) func(map[string]any) {
	return func(obj map[string]any) {
		spec := map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}}
		if class != nil {
			spec["storageClassName"] = class
		}
		_ = unstructured.SetNestedSlice(obj, []any{map[string]any{"metadata": map[string]any{"name": "data"}, "spec": spec}},
			"spec", "volumeClaimTemplates")
	}
}

func preObj(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": preNS}}
	if spec != nil {
		obj["spec"] = spec
	}
	return &unstructured.Unstructured{Object: obj}
}

// preNode is a Ready node with allocatable alloc.
func preNode(name string, alloc corev1.ResourceList, mods ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Allocatable: alloc,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, m := range mods {
		m(&n)
	}
	return n
}

func preTainted(key, value string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule})
	}
}

// preEnv is an Env whose desired state is objs in one plane.
func preEnv(objs ...*unstructured.Unstructured) *Env {
	return prePlanes(map[v1alpha1.Plane][]*unstructured.Unstructured{v1alpha1.PlaneControl: objs})
}

func prePlanes(planes map[v1alpha1.Plane][]*unstructured.Unstructured) *Env {
	d := &plan.Desired{Namespace: preNS}
	for _, name := range []v1alpha1.Plane{v1alpha1.PlaneTenancy, v1alpha1.PlaneInfrastructure, v1alpha1.PlaneControl, v1alpha1.PlaneData, v1alpha1.PlaneIntelligence, v1alpha1.PlaneGateway} {
		if objs, ok := planes[name]; ok {
			d.Planes = append(d.Planes, render.Plane{Name: name, Objects: objs})
		}
	}
	return &Env{
		Namespace: preNS, NamespaceExists: true,
		Server:      &version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2"},
		ClientMinor: 37,
		Desired:     d,
	}
}

func preCheck(t *testing.T, code string) Check {
	t.Helper()
	for _, c := range preChecks() {
		if c.Code == code {
			return c
		}
	}
	t.Fatalf("no check %s", code)
	return Check{}
}

func preFindingText(f Finding) string {
	return string(f.Severity) + " | " + f.Object + " | " + f.Evidence + " | " + f.Fix
}

func TestPreChecks(t *testing.T) {
	cpu := func(n string) map[string]any { return preMap("cpu", n, "memory", "1Gi") }
	twoNodes := []corev1.Node{preNode("node-a", preRL("cpu", "4", "memory", "8Gi")), preNode("node-b", preRL("cpu", "4", "memory", "8Gi"))}
	sm := schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	dep := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	ingress := func(class string) *unstructured.Unstructured {
		spec := map[string]any{"rules": []any{}}
		if class != "" {
			spec["ingressClassName"] = class
		}
		return preObj("networking.k8s.io/v1", "Ingress", "gateway", spec)
	}
	ingressClass := func(name string, def bool) networkingv1.IngressClass {
		ic := networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if def {
			ic.Annotations = map[string]string{annDefaultIngressClass: "true"}
		}
		return ic
	}
	storageClass := func(name string, def bool) storagev1.StorageClass {
		sc := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if def {
			sc.Annotations = map[string]string{annDefaultStorageClass: "true"}
		}
		return sc
	}
	quota := func(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
		return corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: preNS},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
			Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
		}
	}
	platformPod := func(name string, req corev1.ResourceList) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: preNS},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}

	tests := []struct {
		name string
		code string
		env  func() *Env
		want Result
		// contains are substrings each of which some finding must hold.
		contains []string
		// findings is the number of findings expected, -1 for any.
		findings int
	}{
		// ONTO-PRE-001
		{name: "api reachable", code: CodeAPIReachable, env: func() *Env { return preEnv() }, want: ResultPass, findings: 0},
		{name: "api not read", code: CodeAPIReachable, env: func() *Env { e := preEnv(); e.Server = nil; return e }, want: ResultFail, findings: 1},

		// ONTO-PRE-002
		{name: "version current", code: codeServerVersion, env: func() *Env { return preEnv() }, want: ResultPass, findings: 0},
		{name: "version 37+ of a managed cluster", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "1", Minor: "37+", GitVersion: "v1.37.2-eks-1234"}
			return e
		}, want: ResultPass, findings: 0},
		{name: "version old server", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "1", Minor: "27", GitVersion: "v1.27.3"}
			e.ClientMinor = 28
			return e
		}, want: ResultFail, contains: []string{"error | ", "v1.27.3 (1.27)", "need 1.30 or later"}, findings: 1},
		{name: "version old server, far from client too", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "1", Minor: "27", GitVersion: "v1.27.3"}
			return e
		}, want: ResultFail, contains: []string{"need 1.30", "10 minor versions apart"}, findings: 2},
		{name: "version skew behind", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "1", Minor: "34", GitVersion: "v1.34.1"}
			return e
		}, want: ResultWarn, contains: []string{"warning | ", "server 1.34", "client libraries 1.37", "3 minor versions apart"}, findings: 1},
		{name: "version skew ahead", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "1", Minor: "39", GitVersion: "v1.39.0"}
			return e
		}, want: ResultWarn, contains: []string{"2 minor versions apart"}, findings: 1},
		{name: "version one minor apart is fine", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.0"}
			return e
		}, want: ResultPass, findings: 0},
		{name: "version minor from gitVersion", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{GitVersion: "v1.29.4-gke.100"}
			e.ClientMinor = 0
			return e
		}, want: ResultFail, contains: []string{"(1.29)"}, findings: 1},
		{name: "version unreadable", code: codeServerVersion, env: func() *Env {
			e := preEnv()
			e.Server = &version.Info{Major: "x", Minor: "y"}
			return e
		}, want: ResultWarn, findings: 1},
		{name: "version not read", code: codeServerVersion, env: func() *Env { e := preEnv(); e.Server = nil; return e }, want: ResultSkip},

		// ONTO-PRE-003
		{name: "rbac not read", code: codeRBAC, env: func() *Env { return preEnv() }, want: ResultSkip},
		{name: "rbac all allowed", code: codeRBAC, env: func() *Env {
			e := preEnv()
			e.Access = []Access{{Verb: "create", Group: "apps", Resource: "deployments", Namespace: preNS, Allowed: true}}
			return e
		}, want: ResultPass, findings: 0},
		{name: "rbac denied", code: codeRBAC, env: func() *Env {
			e := preEnv()
			e.Access = []Access{
				{Verb: "patch", Group: "apps", Resource: "deployments", Namespace: preNS, Reason: "no RBAC policy matched"},
				{Verb: "create", Group: "apps", Resource: "deployments", Namespace: preNS, Reason: "no RBAC policy matched"},
				{Verb: "get", Group: "apps", Resource: "deployments", Namespace: preNS, Allowed: true},
				{Verb: "create", Group: "", Resource: "namespaces"},
				{Verb: "patch", Group: v1alpha1.GroupVersion.Group, Resource: "ontoplatforms/status", Namespace: preNS},
			}
			return e
		}, want: ResultFail, contains: []string{
			"deployments.apps | denied: create, patch on deployments.apps in namespace onto-system (no RBAC policy matched)",
			`apiGroups: ["apps"], resources: ["deployments"], verbs: ["create", "patch"]`,
			"kubectl create role onto-installer -n onto-system --verb=create,patch --resource=deployments.apps",
			"namespaces | denied: create on namespaces cluster-wide",
			"ClusterRole",
			"--resource=ontoplatforms.onto.paas/status",
		}, findings: 3},

		// ONTO-PRE-004
		{name: "storage nothing claims", code: codeStorageClass, env: func() *Env { return preEnv(preDeploy("gateway", 1, cpu("1"))) }, want: ResultSkip},
		{name: "storage named class exists", code: codeStorageClass, env: func() *Env {
			e := preEnv(preWorkloadObj("StatefulSet", "postgres", 1, cpu("1"), preWithClaim("fast")))
			e.StorageClasses = []storagev1.StorageClass{storageClass("fast", false)}
			return e
		}, want: ResultPass, findings: 0},
		{name: "storage named class missing", code: codeStorageClass, env: func() *Env {
			e := preEnv(preWorkloadObj("StatefulSet", "postgres", 1, cpu("1"), preWithClaim("fast")),
				preWorkloadObj("StatefulSet", "kafka", 1, cpu("1"), preWithClaim("fast")))
			e.StorageClasses = []storagev1.StorageClass{storageClass("standard", true)}
			return e
		}, want: ResultFail, contains: []string{"storageclass/fast | statefulset/postgres, statefulset/kafka claim volumes of storage class fast, which does not exist; the cluster has standard (default)", "spec.global.storageClass"}, findings: 1},
		{name: "storage default exists", code: codeStorageClass, env: func() *Env {
			e := preEnv(preWorkloadObj("StatefulSet", "postgres", 1, cpu("1"), preWithClaim(nil)))
			e.StorageClasses = []storagev1.StorageClass{storageClass("standard", true)}
			return e
		}, want: ResultPass, findings: 0},
		{name: "storage no default", code: codeStorageClass, env: func() *Env {
			e := preEnv(preWorkloadObj("StatefulSet", "postgres", 1, cpu("1"), preWithClaim(nil)))
			e.StorageClasses = []storagev1.StorageClass{storageClass("gp2", false)}
			return e
		}, want: ResultFail, contains: []string{"no class is annotated storageclass.kubernetes.io/is-default-class", "kubectl annotate storageclass gp2"}, findings: 1},

		// ONTO-PRE-005
		{name: "ingress none rendered", code: codeIngressClass, env: func() *Env { return preEnv() }, want: ResultSkip},
		{name: "ingress class exists", code: codeIngressClass, env: func() *Env {
			e := preEnv(ingress("nginx"))
			e.IngressClasses = []networkingv1.IngressClass{ingressClass("nginx", false)}
			return e
		}, want: ResultPass, findings: 0},
		{name: "ingress class missing", code: codeIngressClass, env: func() *Env {
			e := preEnv(ingress("traefik"))
			e.IngressClasses = []networkingv1.IngressClass{ingressClass("nginx", true)}
			return e
		}, want: ResultFail, contains: []string{"ingressclass/traefik | ingress/gateway names IngressClass traefik", "spec.gateway.ingress.className"}, findings: 1},
		{name: "ingress default class", code: codeIngressClass, env: func() *Env {
			e := preEnv(ingress(""))
			e.IngressClasses = []networkingv1.IngressClass{ingressClass("nginx", true)}
			return e
		}, want: ResultPass, findings: 0},
		{name: "ingress no default class", code: codeIngressClass, env: func() *Env {
			e := preEnv(ingress(""))
			e.IngressClasses = []networkingv1.IngressClass{ingressClass("nginx", false)}
			return e
		}, want: ResultWarn, contains: []string{"kubectl annotate ingressclass nginx ingressclass.kubernetes.io/is-default-class=true"}, findings: 1},

		// ONTO-PRE-006
		{name: "served not read", code: codeServedKinds, env: func() *Env { return preEnv() }, want: ResultSkip},
		{name: "served all", code: codeServedKinds, env: func() *Env {
			e := preEnv()
			e.Served = map[schema.GroupVersionKind]bool{dep: true, sm: true}
			return e
		}, want: ResultPass, findings: 0},
		{name: "servicemonitor not served", code: codeServedKinds, env: func() *Env {
			e := preEnv(preObj("monitoring.coreos.com/v1", "ServiceMonitor", "gateway", map[string]any{}))
			e.Served = map[schema.GroupVersionKind]bool{dep: true, sm: false}
			return e
		}, want: ResultFail, contains: []string{"monitoring.coreos.com/v1 ServiceMonitor | the cluster does not serve monitoring.coreos.com/v1 ServiceMonitor; the platform renders servicemonitor/gateway", "spec.observability.metrics.serviceMonitor: false"}, findings: 1},

		// ONTO-PRE-007
		{name: "capacity nothing rendered", code: codeCapacity, env: func() *Env { return preEnv() }, want: ResultSkip},
		{name: "capacity fits", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("gateway", 2, cpu("1")))
			e.Nodes = twoNodes
			e.NodeRequests = map[string]corev1.ResourceList{}
			return e
		}, want: ResultPass, findings: 0},
		{name: "capacity short with surge", code: codeCapacity, env: func() *Env {
			// 3 × 2 cpu, surge 25% of 3 rounded up = 1 pod, one canary: 10 > 8.
			e := preEnv(preDeploy("ontology-service", 3, cpu("2")))
			e.Nodes = twoNodes
			e.NodeRequests = map[string]corev1.ResourceList{}
			return e
		}, want: ResultFail, contains: []string{
			"needs 10.0 cpu (6.0 + surge 4.0), schedulable nodes offer 8.0 free (node-a 4.0, node-b 4.0)",
			"spec.controlPlane.ontologyService.{replicas,resources} (3 × 2.0)",
		}, findings: 1},
		{name: "capacity others' requests come off", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("gateway", 3, cpu("1"), preWithMaxSurge(int64(0))))
			e.Nodes = []corev1.Node{preNode("node-a", preRL("cpu", "2", "memory", "8Gi"))}
			e.NodeRequests = map[string]corev1.ResourceList{"node-a": preRL("cpu", "500m")}
			return e
		}, want: ResultFail, contains: []string{"needs 3.0 cpu (3.0 + surge 0.0), schedulable nodes offer 1.5 free (node-a 1.5)"}, findings: 1},
		{name: "capacity pod too big for what others leave", code: codeCapacity, env: func() *Env {
			// The sum says nothing more than the pod that fits nowhere.
			e := preEnv(preDeploy("gateway", 2, cpu("1"), preWithMaxSurge(int64(0))))
			e.Nodes = []corev1.Node{preNode("node-a", preRL("cpu", "2", "memory", "8Gi"))}
			e.NodeRequests = map[string]corev1.ResourceList{"node-a": preRL("cpu", "1500m")}
			return e
		}, want: ResultFail, contains: []string{"deployment/gateway | one pod asks 1.0 cpu; the largest node it may run on offers 0.5 free (node-a)"}, findings: 1},
		{name: "capacity re-run counts the platform once", code: codeCapacity, env: func() *Env {
			// The platform's own pods run already; NodeRequests leaves them out, so
			// the same need still fits.
			e := preEnv(preDeploy("gateway", 2, cpu("1"), preWithMaxSurge(int64(0))))
			e.Nodes = []corev1.Node{preNode("node-a", preRL("cpu", "2", "memory", "8Gi"))}
			e.NodeRequests = map[string]corev1.ResourceList{"node-a": preRL("cpu", "0")}
			e.Pods = []corev1.Pod{platformPod("gateway-1", preRL("cpu", "1")), platformPod("gateway-2", preRL("cpu", "1"))}
			return e
		}, want: ResultPass, findings: 0},
		{name: "capacity surge is the largest plane's", code: codeCapacity, env: func() *Env {
			// Two planes, one surge pod each: apply rolls one plane at a time, so 1
			// surge pod (1 cpu) and 1 canary (1 cpu): 4 + 2 = 6 fits in 6.
			e := prePlanes(map[v1alpha1.Plane][]*unstructured.Unstructured{
				v1alpha1.PlaneControl: {preDeploy("auth-service", 2, cpu("1"))},
				v1alpha1.PlaneData:    {preDeploy("data-service", 2, cpu("1"))},
			})
			e.Nodes = []corev1.Node{preNode("node-a", preRL("cpu", "6", "memory", "16Gi"))}
			return e
		}, want: ResultPass, findings: 0},
		{name: "capacity tainted node not counted", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("gateway", 3, cpu("2"), preWithMaxSurge(int64(0))))
			e.Nodes = []corev1.Node{
				preNode("node-a", preRL("cpu", "4", "memory", "8Gi")),
				preNode("node-b", preRL("cpu", "4", "memory", "8Gi"), preTainted("dedicated", "db")),
			}
			return e
		}, want: ResultFail, contains: []string{"needs 6.0 cpu (6.0 + surge 0.0), schedulable nodes offer 4.0 free (node-a 4.0) (allocatable: other pods' requests not read)"}, findings: 1},
		{name: "capacity tolerated taint counted", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("gateway", 3, cpu("2"), preWithMaxSurge(int64(0)), preWithToleration("dedicated")))
			e.Nodes = []corev1.Node{
				preNode("node-a", preRL("cpu", "4", "memory", "8Gi")),
				preNode("node-b", preRL("cpu", "4", "memory", "8Gi"), preTainted("dedicated", "db")),
			}
			return e
		}, want: ResultPass, findings: 0},
		{name: "capacity cordoned and not-ready nodes not counted", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("gateway", 1, cpu("1")))
			e.Nodes = []corev1.Node{
				preNode("node-a", preRL("cpu", "4", "memory", "8Gi"), func(n *corev1.Node) { n.Spec.Unschedulable = true }),
				preNode("node-b", preRL("cpu", "4", "memory", "8Gi"), func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }),
			}
			return e
		}, want: ResultFail, contains: []string{"deployment/gateway | no node can run its pods: node-a cordoned, node-b not Ready"}, findings: 1},
		{name: "capacity no GPU node", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("reasoning-service", 1, cpu("1"), preWithLimits(preMap("nvidia.com/gpu", "1")),
				preWithNodeSelector("nvidia.com/gpu.present", "true"), preWithToleration("nvidia.com/gpu")))
			e.Nodes = twoNodes
			return e
		}, want: ResultFail, contains: []string{"deployment/reasoning-service | no node can run its pods: node-a no label nvidia.com/gpu.present=true", "gpu.enabled: false"}, findings: 1},
		{name: "capacity GPU asked, nodes without", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("reasoning-service", 1, cpu("1"), preWithLimits(preMap("nvidia.com/gpu", "1"))))
			e.Nodes = twoNodes
			return e
		}, want: ResultFail, contains: []string{"one pod asks 1 nvidia.com/gpu; no node it may run on offers any", "spec.intelligencePlane.reasoningService.gpu.count"}, findings: 1},
		{name: "capacity pod bigger than any node", code: codeCapacity, env: func() *Env {
			// 2 + 2 GPUs together, but no node has the 4 one pod asks.
			e := preEnv(preDeploy("reasoning-service", 1, cpu("1"), preWithLimits(preMap("nvidia.com/gpu", "4")), preWithMaxSurge(int64(0))))
			e.Nodes = []corev1.Node{
				preNode("gpu-1", preRL("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "2")),
				preNode("gpu-2", preRL("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "2")),
			}
			return e
		}, want: ResultFail, contains: []string{"deployment/reasoning-service | one pod asks 4 nvidia.com/gpu; the largest node it may run on offers 2 free (gpu-1)"}, findings: 1},
		{name: "capacity GPU pool is its own set", code: codeCapacity, env: func() *Env {
			// The GPU pods fit the GPU node's cpu only without the general pods;
			// those may use every node.
			e := preEnv(
				preDeploy("reasoning-service", 2, cpu("3"), preWithLimits(preMap("nvidia.com/gpu", "1")), preWithMaxSurge(int64(0)),
					preWithNodeSelector("gpu", "yes"), preWithToleration("nvidia.com/gpu")),
				preDeploy("gateway", 2, cpu("1"), preWithMaxSurge(int64(0))),
			)
			e.Nodes = []corev1.Node{
				preNode("cpu-1", preRL("cpu", "4", "memory", "8Gi")),
				preNode("gpu-1", preRL("cpu", "4", "memory", "32Gi", "nvidia.com/gpu", "2"), preTainted("nvidia.com/gpu", "present"),
					func(n *corev1.Node) { n.Labels["gpu"] = "yes" }),
			}
			return e
		}, want: ResultFail, contains: []string{"needs 6.0 cpu (6.0 + surge 0.0), the nodes its pods may run on offer 4.0 free (gpu-1 4.0)"}, findings: 1},
		{name: "capacity sidecar and init containers", code: codeCapacity, env: func() *Env {
			// Pod = max(1 + 1 sidecar, 3 init) = 3 cpu: two replicas need 6 > 4.
			d := preDeploy("gateway", 2, cpu("1"), preWithMaxSurge(int64(0)), func(obj map[string]any) {
				always := "Always"
				_ = unstructured.SetNestedSlice(obj, []any{
					map[string]any{"name": "proxy", "restartPolicy": always, "resources": map[string]any{"requests": preMap("cpu", "1")}},
					map[string]any{"name": "migrate", "resources": map[string]any{"requests": preMap("cpu", "2")}},
				}, "spec", "template", "spec", "initContainers")
			})
			e := preEnv(d)
			e.Nodes = []corev1.Node{preNode("node-a", preRL("cpu", "4", "memory", "8Gi"))}
			return e
		}, want: ResultFail, contains: []string{"needs 6.0 cpu (6.0 + surge 0.0)"}, findings: 1},
		{name: "capacity autoscaled uses the HPA floor", code: codeCapacity, env: func() *Env {
			e := preEnv(preDeploy("gateway", -1, cpu("1"), preWithMaxSurge(int64(0))),
				preObj("autoscaling/v2", "HorizontalPodAutoscaler", "gateway", map[string]any{
					"minReplicas": int64(5), "maxReplicas": int64(10),
					"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "gateway"},
				}))
			e.Nodes = []corev1.Node{preNode("node-a", preRL("cpu", "4", "memory", "8Gi"))}
			return e
		}, want: ResultFail, contains: []string{"needs 5.0 cpu (5.0 + surge 0.0)"}, findings: 1},

		// ONTO-PRE-008
		{name: "quota none", code: codeQuota, env: func() *Env { return preEnv(preDeploy("gateway", 2, cpu("1"))) }, want: ResultSkip},
		{name: "quota fits", code: codeQuota, env: func() *Env {
			e := preEnv(preDeploy("gateway", 2, cpu("1")))
			e.Quotas = []corev1.ResourceQuota{quota("q", preRL("requests.cpu", "10", "pods", "20"), preRL("requests.cpu", "0", "pods", "0"))}
			return e
		}, want: ResultPass, findings: 0},
		{name: "quota exceeded", code: codeQuota, env: func() *Env {
			e := preEnv(preDeploy("gateway", 4, cpu("1")))
			e.Quotas = []corev1.ResourceQuota{quota("q", preRL("requests.cpu", "3", "requests.memory", "100Gi"), preRL("requests.cpu", "0"))}
			return e
		}, want: ResultFail, contains: []string{"resourcequota/q | requests.cpu: needs 4.0, allows 3.0 (hard 3.0, used 0.0 of which the platform's pods 0.0)", "kubectl edit resourcequota/q -n onto-system", "spec.gateway.{replicas,resources} (4.0 requests.cpu)"}, findings: 1},
		{name: "quota fits the pods but not the surge", code: codeQuota, env: func() *Env {
			// 4 pods fit 4.5; surge 1 pod and a canary do not.
			e := preEnv(preDeploy("gateway", 4, cpu("1")))
			e.Quotas = []corev1.ResourceQuota{quota("q", preRL("requests.cpu", "4500m"), preRL("requests.cpu", "0"))}
			return e
		}, want: ResultWarn, contains: []string{"warning | resourcequota/q | requests.cpu: needs 4.0 + surge 2.0, allows 4.5", "an upgrade's canary or a rolling update will be refused"}, findings: 1},
		{name: "quota counts the platform's own pods back", code: codeQuota, env: func() *Env {
			// used 6 includes the platform's 4 running pods, which the rendered 4
			// replace: 10 - 6 + 4 = 8 >= 4 + 2.
			e := preEnv(preDeploy("gateway", 4, cpu("1")))
			e.Quotas = []corev1.ResourceQuota{quota("q", preRL("requests.cpu", "10"), preRL("requests.cpu", "6"))}
			for _, n := range []string{"a", "b", "c", "d"} {
				e.Pods = append(e.Pods, platformPod("gateway-"+n, preRL("cpu", "1", "memory", "1Gi")))
			}
			return e
		}, want: ResultPass, findings: 0},
		{name: "quota rendered only", code: codeQuota, env: func() *Env {
			e := preEnv(preDeploy("gateway", 4, cpu("1")),
				preObj("v1", "ResourceQuota", preNS, map[string]any{"hard": preMap("requests.cpu", "2")}))
			return e
		}, want: ResultFail, contains: []string{"resourcequota/onto-system | requests.cpu: needs 4.0, allows 2.0 (hard 2.0)", "spec.tenancy.resourceQuota"}, findings: 1},
		{name: "quota rendered replaces the live hard", code: codeQuota, env: func() *Env {
			e := preEnv(preDeploy("gateway", 4, cpu("1")),
				preObj("v1", "ResourceQuota", "q", map[string]any{"hard": preMap("requests.cpu", "20")}))
			e.Quotas = []corev1.ResourceQuota{quota("q", preRL("requests.cpu", "2"), preRL("requests.cpu", "0"))}
			return e
		}, want: ResultPass, findings: 0},
		{name: "quota tracks limits the pods do not set", code: codeQuota, env: func() *Env {
			e := preEnv(preDeploy("gateway", 1, cpu("1")))
			e.Quotas = []corev1.ResourceQuota{quota("q", preRL("limits.cpu", "10"), preRL("limits.cpu", "0"))}
			return e
		}, want: ResultWarn, contains: []string{"deployment/gateway container gateway sets no limits.cpu"}, findings: 1},
		{name: "quota extended resource", code: codeQuota, env: func() *Env {
			e := preEnv(preDeploy("reasoning-service", 2, cpu("1"), preWithLimits(preMap("nvidia.com/gpu", "1")), preWithMaxSurge(int64(0))))
			e.Quotas = []corev1.ResourceQuota{quota("gpu", preRL("requests.nvidia.com/gpu", "1"), preRL("requests.nvidia.com/gpu", "0"))}
			return e
		}, want: ResultFail, contains: []string{"requests.nvidia.com/gpu: needs 2, allows 1"}, findings: 1},

		// ONTO-PRE-009
		{name: "admission new namespace", code: codeAdmission, env: func() *Env {
			e := preEnv()
			e.NamespaceExists = false
			return e
		}, want: ResultSkip},
		{name: "admission admitted", code: codeAdmission, env: func() *Env {
			e := preEnv()
			e.DryRunErrors = map[string]string{}
			return e
		}, want: ResultPass, findings: 0},
		{name: "admission not dry-run is a skip, never a pass", code: codeAdmission, env: func() *Env { return preEnv() }, want: ResultSkip, findings: 0},
		{name: "admission refused", code: codeAdmission, env: func() *Env {
			e := preEnv(preObj("v1", "Namespace", preNS, nil))
			e.Desired.Planes[0].Objects[0].SetLabels(map[string]string{podSecurityEnforce: "restricted"})
			e.NamespaceLabels = map[string]string{podSecurityEnforce: "restricted"}
			e.DryRunErrors = map[string]string{
				"deployment/gateway":   `pods "gateway" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`,
				"statefulset/postgres": `admission webhook "policy.example.com" denied the request`,
			}
			return e
		}, want: ResultFail, contains: []string{
			"deployment/gateway | pods \"gateway\" is forbidden: violates PodSecurity",
			"enforces PodSecurity level restricted",
			"statefulset/postgres | admission webhook",
		}, findings: 2},
		{name: "admission refused, namespace not the platform's", code: codeAdmission, env: func() *Env {
			e := preEnv()
			e.NamespaceLabels = map[string]string{podSecurityEnforce: "baseline"}
			e.DryRunErrors = map[string]string{"deployment/gateway": `violates PodSecurity "baseline:latest": hostPath volumes`}
			return e
		}, want: ResultFail, contains: []string{"kubectl label namespace onto-system pod-security.kubernetes.io/enforce=privileged --overwrite"}, findings: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCheck(tt.env(), preCheck(t, tt.code))
			var texts []string
			for _, f := range res.Findings {
				texts = append(texts, preFindingText(f))
			}
			all := strings.Join(texts, "\n")
			if res.Result != tt.want {
				t.Fatalf("result %s (%s), want %s; findings:\n%s", res.Result, res.SkipReason, tt.want, all)
			}
			if tt.want != ResultSkip && tt.findings >= 0 && len(res.Findings) != tt.findings {
				t.Errorf("%d findings, want %d:\n%s", len(res.Findings), tt.findings, all)
			}
			for _, want := range tt.contains {
				if !strings.Contains(all, want) {
					t.Errorf("no finding contains %q:\n%s", want, all)
				}
			}
		})
	}
}

func TestPreChecksArePre(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range preChecks() {
		if !c.Pre || c.Category != CategoryPre || c.Run == nil || c.Description == "" {
			t.Errorf("%s: Pre %v, category %s", c.Code, c.Pre, c.Category)
		}
		if seen[c.Code] {
			t.Errorf("%s twice", c.Code)
		}
		seen[c.Code] = true
	}
	if len(seen) != 9 {
		t.Errorf("%d checks, want 9", len(seen))
	}
}
