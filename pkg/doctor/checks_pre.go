/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// CodeAPIReachable is the code of the API server check; a gather that could not reach
// the server reports it through Fatal, since no other check can run then.
const CodeAPIReachable = "ONTO-PRE-001"

// MinServerMinor is the oldest Kubernetes 1.x the CRD's validation rules work on. The
// CRD uses CEL rules (x-kubernetes-validations) with a transition rule (`self ==
// oldSelf` on spec.global.storageClass), fieldPath on its rules, and the Kubernetes
// quantity library (`quantity(...)` comparing requests with limits); no
// messageExpression. The rules, transition rules included, are GA in 1.29; the quantity
// library is in the CEL environment from 1.28, but a server admits it in a new CRD only
// once its CEL compatibility version reaches 1.28, which is 1.29. So 1.29 is the least
// where everything used works; 1.30 also brings validation ratcheting on by default (an
// update that leaves an invalid field unchanged is not refused after the rules
// tighten), and 1.29 is out of upstream support.
const MinServerMinor = 30

// Preflight codes besides CodeAPIReachable.
const (
	codeServerVersion = "ONTO-PRE-002"
	codeRBAC          = "ONTO-PRE-003"
	codeStorageClass  = "ONTO-PRE-004"
	codeIngressClass  = "ONTO-PRE-005"
	codeServedKinds   = "ONTO-PRE-006"
	codeCapacity      = "ONTO-PRE-007"
	codeQuota         = "ONTO-PRE-008"
	codeAdmission     = "ONTO-PRE-009"
)

// Annotations marking a default class. The beta storage annotation is still honoured
// by the DefaultStorageClass admission plugin.
const (
	annDefaultStorageClass     = "storageclass.kubernetes.io/is-default-class"
	annDefaultStorageClassBeta = "storageclass.beta.kubernetes.io/is-default-class"
	annDefaultIngressClass     = "ingressclass.kubernetes.io/is-default-class"
	annIngressClassLegacy      = "kubernetes.io/ingress.class"
)

func preChecks() []Check {
	pre := func(code, desc string, skip func(*Env) string, run func(*Env) []Finding) Check {
		return Check{Code: code, Category: CategoryPre, Description: desc, Pre: true, Skip: skip, Run: run}
	}
	return []Check{
		pre(CodeAPIReachable, "API server reachable", nil, checkAPIReachable),
		pre(codeServerVersion, "Server version supported", skipServerVersion, checkServerVersion),
		pre(codeRBAC, "Permissions to install", skipRBAC, checkRBAC),
		pre(codeStorageClass, "Storage class exists", skipStorageClass, checkStorageClass),
		pre(codeIngressClass, "IngressClass exists", skipIngressClass, checkIngressClass),
		pre(codeServedKinds, "Rendered kinds served", skipServedKinds, checkServedKinds),
		pre(codeCapacity, "Node capacity for requests and surge", skipCapacity, checkCapacity),
		pre(codeQuota, "ResourceQuota headroom", skipQuota, checkQuota),
		pre(codeAdmission, "Admission dry-run", skipAdmission, checkAdmission),
	}
}

// --- ONTO-PRE-001 -------------------------------------------------------------------

func checkAPIReachable(env *Env) []Finding {
	if env.Server != nil {
		return nil
	}
	return []Finding{{
		Evidence: "the API server's version was not read",
		Fix:      "check the kubeconfig's server and credentials: kubectl version",
	}}
}

// --- ONTO-PRE-002 -------------------------------------------------------------------

func skipServerVersion(env *Env) string {
	if env.Server == nil {
		return "server version not read"
	}
	return ""
}

func checkServerVersion(env *Env) []Finding {
	minor, ok := preServerMinor(env.Server.Major, env.Server.Minor, env.Server.GitVersion)
	shown := env.Server.GitVersion
	if shown == "" {
		shown = env.Server.Major + "." + env.Server.Minor
	}
	if !ok {
		return []Finding{{
			Severity: SeverityWarning,
			Evidence: fmt.Sprintf("cannot read a 1.x minor version from the server's %q", shown),
			Fix:      "check the server's version with kubectl version; 1." + strconv.Itoa(MinServerMinor) + " or later is needed",
		}}
	}
	var out []Finding
	if minor < MinServerMinor {
		out = append(out, Finding{
			Severity: SeverityError,
			Evidence: fmt.Sprintf("server %s (1.%d); the OntoPlatform CRD's CEL validation rules need 1.%d or later", shown, minor, MinServerMinor),
			Fix:      fmt.Sprintf("upgrade the cluster's control plane to 1.%d or later", MinServerMinor),
		})
	}
	if c := env.ClientMinor; c > 0 && (minor > c+1 || minor < c-1) {
		out = append(out, Finding{
			Severity: SeverityWarning,
			Evidence: fmt.Sprintf("server 1.%d, this kubectl-onto's client libraries 1.%d: %d minor versions apart, beyond the ±1 of kubectl's version skew policy",
				minor, c, max(minor-c, c-minor)),
			Fix: fmt.Sprintf("use a kubectl-onto built for 1.%d–1.%d, or bring the cluster within one minor version of 1.%d", minor-1, minor+1, c),
		})
	}
	return out
}

// --- ONTO-PRE-003 -------------------------------------------------------------------

func skipRBAC(env *Env) string {
	if env.Access == nil {
		return "permissions not read"
	}
	return ""
}

func checkRBAC(env *Env) []Finding {
	type key struct{ group, resource, namespace string }
	denied := map[key][]Access{}
	for _, a := range env.Access {
		if !a.Allowed {
			k := key{a.Group, a.Resource, a.Namespace}
			denied[k] = append(denied[k], a)
		}
	}
	keys := make([]key, 0, len(denied))
	for k := range denied {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		if a.group != b.group {
			return a.group < b.group
		}
		return a.resource < b.resource
	})
	var out []Finding
	for _, k := range keys {
		var verbs, reasons []string
		for _, a := range denied[k] {
			if !slices.Contains(verbs, a.Verb) {
				verbs = append(verbs, a.Verb)
			}
			if a.Reason != "" && !slices.Contains(reasons, a.Reason) {
				reasons = append(reasons, a.Reason)
			}
		}
		sort.Strings(verbs)
		res := k.resource
		if k.group != "" {
			// kubectl's resource.group form; a subresource keeps its slash at the end.
			base, sub, _ := strings.Cut(k.resource, "/")
			res = base + "." + k.group
			if sub != "" {
				res += "/" + sub
			}
		}
		where := "cluster-wide"
		if k.namespace != "" {
			where = "in namespace " + k.namespace
		}
		evidence := fmt.Sprintf("denied: %s on %s %s", strings.Join(verbs, ", "), res, where)
		if len(reasons) > 0 {
			evidence += " (" + strings.Join(reasons, "; ") + ")"
		}
		rule := fmt.Sprintf(`apiGroups: [%q], resources: [%q], verbs: [%s]`, k.group, k.resource, preQuoteJoin(verbs))
		var fix string
		if k.namespace == "" {
			fix = fmt.Sprintf("have a ClusterRole with the rule %s bound to you by a ClusterRoleBinding: kubectl create clusterrole onto-installer --verb=%s --resource=%s",
				rule, strings.Join(verbs, ","), res)
		} else {
			fix = fmt.Sprintf("have a Role in namespace %s with the rule %s bound to you by a RoleBinding: kubectl create role onto-installer -n %s --verb=%s --resource=%s",
				k.namespace, rule, k.namespace, strings.Join(verbs, ","), res)
			if k.namespace == env.Namespace && !env.NamespaceExists {
				fix += fmt.Sprintf(" (namespace %s does not exist yet: until the platform creates it, only a ClusterRole with a ClusterRoleBinding can grant this)", k.namespace)
			}
		}
		obj := res
		if k.namespace != "" && k.namespace != env.Namespace {
			obj = k.namespace + "/" + res
		}
		out = append(out, Finding{Severity: SeverityError, Object: obj, Evidence: evidence, Fix: fix})
	}
	return out
}

func preQuoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// --- ONTO-PRE-004 -------------------------------------------------------------------

// preClaims maps each storage class the rendered volumes ask for to the objects asking;
// "" is the cluster's default class. An explicit empty storageClassName asks for no
// class at all (pre-provisioned volumes), so it needs no class to exist.
func preClaims(env *Env) (map[string][]string, int) {
	claims := map[string][]string{}
	n := 0
	add := func(obj string, spec map[string]any) {
		n++
		v, found := spec["storageClassName"]
		if !found || v == nil {
			claims[""] = appendUnique(claims[""], obj)
			return
		}
		if s, ok := v.(string); ok && s != "" {
			claims[s] = appendUnique(claims[s], obj)
		}
	}
	for _, o := range env.Rendered() {
		switch o.GetKind() {
		case health.KindStatefulSet:
			vcts, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeClaimTemplates")
			for _, t := range vcts {
				tm, _ := t.(map[string]any)
				spec, _, _ := unstructured.NestedMap(tm, "spec")
				add(preObject(o), spec)
			}
		case "PersistentVolumeClaim":
			spec, _, _ := unstructured.NestedMap(o.Object, "spec")
			add(preObject(o), spec)
		}
	}
	return claims, n
}

func appendUnique(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}

func skipStorageClass(env *Env) string {
	if _, n := preClaims(env); n == 0 {
		return "nothing rendered claims a volume"
	}
	return ""
}

func checkStorageClass(env *Env) []Finding {
	claims, _ := preClaims(env)
	exists := map[string]bool{}
	var names, defaults []string
	for _, sc := range env.StorageClasses {
		exists[sc.Name] = true
		name := sc.Name
		if sc.Annotations[annDefaultStorageClass] == "true" || sc.Annotations[annDefaultStorageClassBeta] == "true" {
			defaults = append(defaults, sc.Name)
			name += " (default)"
		}
		names = append(names, name)
	}
	sort.Strings(names)
	have := "the cluster has no storage class"
	if len(names) > 0 {
		have = "the cluster has " + strings.Join(names, ", ")
	}
	immutable := ""
	if env.Platform != nil {
		immutable = " (it cannot change on an installed platform: its volumes keep their class)"
	}
	classes := make([]string, 0, len(claims))
	for c := range claims {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	var out []Finding
	for _, c := range classes {
		who := strings.Join(claims[c], ", ") + " claim"
		if len(claims[c]) == 1 {
			who += "s"
		}
		switch {
		case c == "" && len(defaults) == 0:
			fix := "install a volume provisioner with a storage class marked default, or set spec.global.storageClass to a class it provides"
			if len(env.StorageClasses) > 0 {
				first := env.StorageClasses[0].Name
				fix = fmt.Sprintf("set spec.global.storageClass to one of the cluster's classes%s, or mark one default: kubectl annotate storageclass %s %s=true",
					immutable, first, annDefaultStorageClass)
			}
			out = append(out, Finding{
				Severity: SeverityError,
				Evidence: fmt.Sprintf("%s volumes of the default storage class, and no class is annotated %s: \"true\"; %s", who, annDefaultStorageClass, have),
				Fix:      fix,
			})
		case c != "" && !exists[c]:
			out = append(out, Finding{
				Severity: SeverityError,
				Object:   "storageclass/" + c,
				Evidence: fmt.Sprintf("%s volumes of storage class %s, which does not exist; %s", who, c, have),
				Fix:      fmt.Sprintf("set spec.global.storageClass to an existing class%s, or create storage class %s", immutable, c),
			})
		}
	}
	return out
}

// --- ONTO-PRE-005 -------------------------------------------------------------------

func preIngresses(env *Env) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range env.Rendered() {
		if o.GetKind() == "Ingress" {
			out = append(out, o)
		}
	}
	return out
}

func skipIngressClass(env *Env) string {
	if len(preIngresses(env)) == 0 {
		return "no Ingress rendered"
	}
	return ""
}

func checkIngressClass(env *Env) []Finding {
	exists := map[string]bool{}
	var names []string
	hasDefault := false
	for _, ic := range env.IngressClasses {
		exists[ic.Name] = true
		name := ic.Name
		if ic.Annotations[annDefaultIngressClass] == "true" {
			hasDefault = true
			name += " (default)"
		}
		names = append(names, name)
	}
	sort.Strings(names)
	have := "the cluster has no IngressClass"
	if len(names) > 0 {
		have = "the cluster has " + strings.Join(names, ", ")
	}
	var out []Finding
	for _, ing := range preIngresses(env) {
		class, _, _ := unstructured.NestedString(ing.Object, "spec", "ingressClassName")
		switch {
		case class != "" && !exists[class]:
			out = append(out, Finding{
				Severity: SeverityError,
				Object:   "ingressclass/" + class,
				Evidence: fmt.Sprintf("%s names IngressClass %s, which does not exist, so no controller serves it; %s", preObject(ing), class, have),
				Fix:      fmt.Sprintf("set spec.gateway.ingress.className to an existing IngressClass, or install the ingress controller that provides %s", class),
			})
		case class == "" && ing.GetAnnotations()[annIngressClassLegacy] == "" && !hasDefault:
			// Only a warning: the Ingress is admitted, and some controllers serve
			// Ingresses without a class (ingress-nginx --watch-ingress-without-class).
			fix := "install an ingress controller with a default IngressClass, or set spec.gateway.ingress.className"
			if len(env.IngressClasses) > 0 {
				fix = fmt.Sprintf("set spec.gateway.ingress.className to one of the cluster's IngressClasses, or mark one default: kubectl annotate ingressclass %s %s=true",
					env.IngressClasses[0].Name, annDefaultIngressClass)
			}
			out = append(out, Finding{
				Severity: SeverityWarning,
				Object:   preObject(ing),
				Evidence: fmt.Sprintf("the Ingress names no class and no IngressClass is annotated %s: \"true\", so it gets none; %s", annDefaultIngressClass, have),
				Fix:      fix,
			})
		}
	}
	return out
}

// --- ONTO-PRE-006 -------------------------------------------------------------------

func skipServedKinds(env *Env) string {
	if env.Served == nil {
		return "no desired state"
	}
	return ""
}

func checkServedKinds(env *Env) []Finding {
	var out []Finding
	for gvk, served := range env.Served {
		if served {
			continue
		}
		kind := gvk.GroupVersion().String() + " " + gvk.Kind
		var users []string
		for _, o := range env.Rendered() {
			if o.GroupVersionKind() == gvk {
				users = append(users, preObject(o))
			}
		}
		evidence := "the cluster does not serve " + kind
		if len(users) > 0 {
			evidence += "; the platform renders " + strings.Join(users, ", ")
		}
		fix := fmt.Sprintf("install the CRD or API that serves %s, or turn off the part of the spec that renders it", kind)
		if gvk.Group == "monitoring.coreos.com" && gvk.Kind == "ServiceMonitor" {
			fix = "install the Prometheus Operator's CRDs, or set spec.observability.metrics.serviceMonitor: false"
		}
		out = append(out, Finding{Severity: SeverityError, Object: kind, Evidence: evidence, Fix: fix})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}

// --- spec fields, shared by ONTO-PRE-007 and ONTO-PRE-008 ---------------------------

// preSpecPath is the spec section of a component, "" when it has none (the platform's
// own objects).
func preSpecPath(component string) string {
	cs := (&v1alpha1.OntoPlatformSpec{}).Components()
	for _, c := range cs {
		if c.Name == component {
			return c.SpecPath
		}
	}
	for _, c := range cs {
		if strings.HasPrefix(component, c.Name+"-") { // redis-sentinel
			return c.SpecPath
		}
	}
	return ""
}

// --- ONTO-PRE-007 -------------------------------------------------------------------

func skipCapacity(env *Env) string {
	ws, bad := preWorkloads(env)
	if len(ws) == 0 && len(bad) == 0 {
		return "nothing rendered"
	}
	return ""
}

// preNodeFit says whether a pod with spec may run on node, and if not, why.
func preNodeFit(node *corev1.Node, spec *corev1.PodSpec) string {
	if node.Spec.Unschedulable {
		return "cordoned"
	}
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "not Ready"
	}
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := node.Labels[k]; !ok || v != spec.NodeSelector[k] {
			return fmt.Sprintf("no label %s=%s", k, spec.NodeSelector[k])
		}
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for j := range spec.Tolerations {
			if spec.Tolerations[j].ToleratesTaint(logr.Discard(), t, true) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return "taint " + t.ToString() + " not tolerated"
		}
	}
	return ""
}

func checkCapacity(env *Env) []Finding {
	ws, bad := preWorkloads(env)
	var out []Finding
	for _, b := range bad {
		out = append(out, Finding{Severity: SeverityWarning, Evidence: "pod template not read, left out of the sums: " + b})
	}
	nodes := make([]*corev1.Node, len(env.Nodes))
	for i := range env.Nodes {
		nodes[i] = &env.Nodes[i]
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	// What each node has left for the platform: its own pods there are replaced, so
	// only the others' requests come off (a re-run does not count the platform twice).
	free := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		f := n.Status.Allocatable.DeepCopy()
		if f == nil {
			f = corev1.ResourceList{}
		}
		for r, q := range env.NodeRequests[n.Name] {
			v := f[r]
			v.Sub(q)
			if v.Sign() < 0 {
				v = resource.Quantity{}
			}
			f[r] = v
		}
		free[n.Name] = f
	}
	freeNote := ""
	if env.NodeRequests == nil {
		freeNote = " (allocatable: other pods' requests not read)"
	}

	// Nodes each workload may run on.
	eligible := make([][]string, len(ws))
	for i := range ws {
		w := &ws[i]
		if w.Replicas <= 0 {
			continue
		}
		var why []string
		for _, n := range nodes {
			if reason := preNodeFit(n, &w.Spec); reason == "" {
				eligible[i] = append(eligible[i], n.Name)
			} else {
				why = append(why, n.Name+" "+reason)
			}
		}
		if len(eligible[i]) == 0 {
			evidence := "no node can run its pods"
			if len(nodes) == 0 {
				evidence = "the cluster has no nodes"
			} else {
				evidence += ": " + preList(why, 6)
			}
			out = append(out, Finding{
				Severity: SeverityError, Object: w.Object, Evidence: evidence,
				Fix: "add nodes it may run on, or align spec.global.nodeSelector and spec.global.tolerations with the nodes' labels and taints" +
					preGPUHint(w),
			})
		}
	}

	// A pod larger than every node it may run on never schedules, however much the
	// nodes offer together.
	tooBig := map[corev1.ResourceName]map[int]bool{}
	for i := range ws {
		w := &ws[i]
		if len(eligible[i]) == 0 {
			continue
		}
		for _, r := range preSortedNames(w.Requests) {
			q := w.Requests[r]
			if q.Sign() <= 0 {
				continue
			}
			best, bestNode := resource.Quantity{}, ""
			for _, n := range eligible[i] {
				if f := free[n][r]; bestNode == "" || f.Cmp(best) > 0 {
					best, bestNode = f.DeepCopy(), n
				}
			}
			if q.Cmp(best) <= 0 {
				continue
			}
			if tooBig[r] == nil {
				tooBig[r] = map[int]bool{}
			}
			tooBig[r][i] = true
			evidence := fmt.Sprintf("one pod asks %s %s; the largest node it may run on offers %s free (%s)%s",
				preQty(r, q), r, preQty(r, best), bestNode, freeNote)
			if best.IsZero() {
				evidence = fmt.Sprintf("one pod asks %s %s; no node it may run on offers any%s", preQty(r, q), r, freeNote)
			}
			fix := fmt.Sprintf("lower the pod's %s in %s, or add a node with more %s", r, preResourcesField(w, r), r)
			out = append(out, Finding{Severity: SeverityError, Object: w.Object, Evidence: evidence, Fix: fix})
		}
	}

	// The sums. Workloads may run on different node sets (a GPU pool), so each set a
	// workload may use is checked with every workload confined to it, and the union
	// with all of them.
	sets := map[string][]string{}
	var union []string
	for i := range ws {
		if len(eligible[i]) == 0 {
			continue
		}
		sets[strings.Join(eligible[i], ",")] = eligible[i]
		for _, n := range eligible[i] {
			union = appendUnique(union, n)
		}
	}
	sort.Strings(union)
	sets[strings.Join(union, ",")] = union
	type shortfall struct {
		need, surge, steady, offer, deficit resource.Quantity
		nodes                               []string
		members                             []int
	}
	worst := map[corev1.ResourceName]*shortfall{}
	setKeys := make([]string, 0, len(sets))
	for k := range sets {
		setKeys = append(setKeys, k)
	}
	sort.Strings(setKeys)
	for _, k := range setKeys {
		set := sets[k]
		if len(set) == 0 {
			continue
		}
		var members []preWorkload
		var idx []int
		for i := range ws {
			if len(eligible[i]) > 0 && preSubset(eligible[i], set) {
				members = append(members, ws[i])
				idx = append(idx, i)
			}
		}
		reqOf := func(w *preWorkload) corev1.ResourceList { return w.Requests }
		steady, surge := preSteady(members, reqOf), preSurge(members, reqOf)
		offer := corev1.ResourceList{}
		for _, n := range set {
			preAdd(offer, free[n], 1)
		}
		names := map[corev1.ResourceName]bool{}
		for r := range steady {
			names[r] = true
		}
		for r := range surge {
			names[r] = true
		}
		for r := range names {
			need := steady[r].DeepCopy()
			need.Add(surge[r])
			o := offer[r]
			if need.Cmp(o) <= 0 || need.Sign() <= 0 {
				continue
			}
			d := need.DeepCopy()
			d.Sub(o)
			cur := worst[r]
			if cur == nil || d.Cmp(cur.deficit) > 0 || (d.Cmp(cur.deficit) == 0 && len(set) < len(cur.nodes)) {
				worst[r] = &shortfall{need: need, surge: surge[r].DeepCopy(), steady: steady[r].DeepCopy(), offer: o.DeepCopy(), deficit: d, nodes: set, members: idx}
			}
		}
	}
	for _, r := range preSortedKeys(worst) {
		s := worst[r]
		// Pods that fit no node are reported already; the sum says nothing more when
		// they are all that asks for the resource.
		onlyTooBig := true
		for _, i := range s.members {
			if q := ws[i].Requests[r]; q.Sign() > 0 && !tooBig[r][i] {
				onlyTooBig = false
			}
		}
		if onlyTooBig && len(tooBig[r]) > 0 {
			continue
		}
		where := "schedulable nodes offer"
		if len(s.nodes) < len(union) {
			where = "the nodes its pods may run on offer"
		}
		perNode := make([]string, 0, len(s.nodes))
		byFree := slices.Clone(s.nodes)
		sort.SliceStable(byFree, func(i, j int) bool {
			a, b := free[byFree[i]][r], free[byFree[j]][r]
			return a.Cmp(b) > 0
		})
		for _, n := range byFree {
			perNode = append(perNode, n+" "+preQty(r, free[n][r]))
		}
		evidence := fmt.Sprintf("needs %s %s (%s + surge %s), %s %s free (%s)%s",
			preQty(r, s.need), r, preQty(r, s.steady), preQty(r, s.surge), where, preQty(r, s.offer), preList(perNode, 6), freeNote)
		// The biggest consumers are where lowering replicas or resources helps most.
		type consumer struct {
			field string
			q     resource.Quantity
		}
		var cons []consumer
		for _, i := range s.members {
			w := &ws[i]
			q := preTimes(w.Requests[r], w.Replicas)
			if q.Sign() > 0 {
				cons = append(cons, consumer{preSpecField(w) + fmt.Sprintf(" (%s × %s)", strconv.FormatInt(w.Replicas, 10), preQty(r, w.Requests[r])), q})
			}
		}
		sort.SliceStable(cons, func(i, j int) bool { return cons[i].q.Cmp(cons[j].q) > 0 })
		var top []string
		for _, c := range cons[:min(3, len(cons))] {
			top = append(top, c.field)
		}
		fix := fmt.Sprintf("add nodes with %s, or lower replicas or resources of the biggest consumers: %s", r, strings.Join(top, ", "))
		out = append(out, Finding{Severity: SeverityError, Evidence: evidence, Fix: fix})
	}
	return out
}

func preGPUHint(w *preWorkload) string {
	for _, r := range preSortedNames(w.Requests) {
		if preIsExtended(r) && w.Component == v1alpha1.ComponentReasoningService {
			return fmt.Sprintf("; it asks for %s: without such nodes, turn the GPU off (spec.intelligencePlane.reasoningService.gpu.enabled: false)", r)
		}
	}
	return ""
}

// preSpecField names where a workload's replicas and resources are set.
func preSpecField(w *preWorkload) string {
	if p := preSpecPath(w.Component); p != "" {
		return p + ".{replicas,resources}"
	}
	return w.Object
}

func preResourcesField(w *preWorkload, r corev1.ResourceName) string {
	p := preSpecPath(w.Component)
	switch {
	case p == "":
		return w.Object + " (spec.patches)"
	case preIsExtended(r) && w.Component == v1alpha1.ComponentReasoningService:
		return p + ".gpu.count"
	}
	return p + ".resources"
}

func preSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func preList(items []string, n int) string {
	if len(items) == 0 {
		return "none"
	}
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", and %d more", len(items)-n)
}

// --- ONTO-PRE-008 -------------------------------------------------------------------

// preQuotaValidated are the quota resources every container must set once a quota
// tracks them, or the pod is refused (the pod quota evaluator's validationSet).
var preQuotaValidated = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true,
	corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true,
	corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true,
}

// preQuota is a ResourceQuota as it will be after apply: the rendered hard replaces a
// live quota's of the same name.
type preQuota struct {
	Object   string
	Hard     corev1.ResourceList
	Used     corev1.ResourceList // nil: not live yet
	Rendered bool
}

func preQuotas(env *Env) []preQuota {
	rendered := map[string]corev1.ResourceList{}
	var order []string
	for _, o := range env.Rendered() {
		if o.GetKind() != "ResourceQuota" {
			continue
		}
		ns := o.GetNamespace()
		if ns == "" {
			ns = env.Namespace
		}
		if ns != env.Namespace {
			continue
		}
		var q corev1.ResourceQuota
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &q); err != nil {
			continue
		}
		rendered[o.GetName()] = q.Spec.Hard
		order = append(order, o.GetName())
	}
	var out []preQuota
	for i := range env.Quotas {
		q := &env.Quotas[i]
		if q.Namespace != env.Namespace && q.Namespace != "" {
			continue
		}
		// A scoped quota (BestEffort, PriorityClass...) counts only the pods in its
		// scope; which of the platform's pods those are is not worked out here.
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			continue
		}
		pq := preQuota{Object: "resourcequota/" + q.Name, Hard: q.Spec.Hard, Used: q.Status.Used}
		if pq.Used == nil {
			pq.Used = corev1.ResourceList{}
		}
		if h, ok := rendered[q.Name]; ok {
			pq.Hard, pq.Rendered = h, true
			delete(rendered, q.Name)
		}
		out = append(out, pq)
	}
	for _, name := range order {
		if h, ok := rendered[name]; ok {
			out = append(out, preQuota{Object: "resourcequota/" + name, Hard: h, Rendered: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}

func skipQuota(env *Env) string {
	if env.Desired == nil {
		return "no desired state"
	}
	if len(preQuotas(env)) == 0 {
		return "no ResourceQuota in namespace " + env.Namespace + ", none rendered"
	}
	return ""
}

func checkQuota(env *Env) []Finding {
	ws, _ := preWorkloads(env)
	usage := func(w *preWorkload) corev1.ResourceList { return preQuotaUsage(w.Requests, w.Limits) }
	steady, surge := preSteady(ws, usage), preSurge(ws, usage)
	// The platform's running pods are counted in used but are replaced, not added to.
	current := corev1.ResourceList{}
	for i := range env.Pods {
		p := &env.Pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		req, lim := prePodResources(&p.Spec)
		preAdd(current, preQuotaUsage(req, lim), 1)
	}
	var out []Finding
	for _, q := range preQuotas(env) {
		var over, surgeOver []string
		var overKeys []corev1.ResourceName
		for _, r := range preSortedNames(q.Hard) {
			need, ok := steady[r]
			if !ok {
				continue // a resource these pods do not count (object counts, storage)
			}
			avail := q.Hard[r].DeepCopy()
			detail := "hard " + preQty(r, q.Hard[r])
			if q.Used != nil {
				used := q.Used[r]
				avail.Sub(used)
				avail.Add(current[r])
				detail += fmt.Sprintf(", used %s of which the platform's pods %s", preQty(r, used), preQty(r, current[r]))
			}
			withSurge := need.DeepCopy()
			withSurge.Add(surge[r])
			switch {
			case need.Cmp(avail) > 0:
				over = append(over, fmt.Sprintf("%s: needs %s, allows %s (%s)", r, preQty(r, need), preQty(r, avail), detail))
				overKeys = append(overKeys, r)
			case withSurge.Cmp(avail) > 0:
				surgeOver = append(surgeOver, fmt.Sprintf("%s: needs %s + surge %s, allows %s (%s)", r, preQty(r, need), preQty(r, surge[r]), preQty(r, avail), detail))
			}
		}
		raise := fmt.Sprintf("raise its spec.hard (kubectl edit %s -n %s)", q.Object, env.Namespace)
		if q.Rendered {
			raise = "raise spec.tenancy.resourceQuota"
		}
		if len(over) > 0 {
			out = append(out, Finding{
				Severity: SeverityError, Object: q.Object,
				Evidence: strings.Join(over, "; "),
				Fix:      raise + ", or lower replicas or resources of the components: " + preTopQuota(ws, usage, overKeys[0]),
			})
		}
		if len(surgeOver) > 0 {
			out = append(out, Finding{
				Severity: SeverityWarning, Object: q.Object,
				Evidence: strings.Join(surgeOver, "; ") + ": the pods fit, but an upgrade's canary or a rolling update will be refused",
				Fix:      raise + " by at least the surge, or lower replicas or resources",
			})
		}
		// A tracked cpu or memory quota refuses a pod any of whose containers does
		// not set that resource.
		var missing []string
		for r := range q.Hard {
			if !preQuotaValidated[r] {
				continue
			}
			for i := range ws {
				for _, c := range preAllContainers(&ws[i].Spec) {
					u := preQuotaUsage(preContainerRequests(c), c.Resources.Limits)
					if _, ok := u[r]; !ok {
						missing = appendUnique(missing, fmt.Sprintf("%s container %s sets no %s", ws[i].Object, c.Name, r))
					}
				}
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			out = append(out, Finding{
				Severity: SeverityWarning, Object: q.Object,
				Evidence: preList(missing, 4) + ": the quota refuses such pods, unless a LimitRange in the namespace gives a default",
				Fix:      "set requests and limits of cpu and memory in each component's resources",
			})
		}
	}
	return out
}

func preTopQuota(ws []preWorkload, usage func(*preWorkload) corev1.ResourceList, r corev1.ResourceName) string {
	type consumer struct {
		field string
		q     resource.Quantity
	}
	var cons []consumer
	for i := range ws {
		w := &ws[i]
		if w.Replicas <= 0 {
			continue
		}
		if q := preTimes(usage(w)[r], w.Replicas); q.Sign() > 0 {
			cons = append(cons, consumer{preSpecField(w), q})
		}
	}
	sort.SliceStable(cons, func(i, j int) bool { return cons[i].q.Cmp(cons[j].q) > 0 })
	var top []string
	for _, c := range cons[:min(3, len(cons))] {
		top = append(top, fmt.Sprintf("%s (%s %s)", c.field, preQty(r, c.q), r))
	}
	return strings.Join(top, ", ")
}

// --- ONTO-PRE-009 -------------------------------------------------------------------

func skipAdmission(env *Env) string {
	if !env.NamespaceExists {
		return "the namespace does not exist yet; its PodSecurity labels come from the platform"
	}
	if env.DryRunErrors == nil && env.Platform != nil && (env.Plan != nil || env.PlanError != "") {
		return "installed: the drift plan (" + CodeDrift + ") dry-runs every object through admission"
	}
	if env.DryRunErrors == nil {
		return "not dry-run"
	}
	return ""
}

func checkAdmission(env *Env) []Finding {
	keys := make([]string, 0, len(env.DryRunErrors))
	for k := range env.DryRunErrors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Finding
	for _, k := range keys {
		msg := env.DryRunErrors[k]
		fix := "the server's admission refused it: read the message, and the webhooks or policies that apply to namespace " + env.Namespace
		if strings.Contains(msg, "violates PodSecurity") {
			level := env.NamespaceLabels[podSecurityEnforce]
			lower := map[string]string{"restricted": "baseline", "baseline": "privileged"}[level]
			if level == "" {
				level = "(unset: the cluster's default)"
			}
			if lower == "" {
				lower = "<a level the pod meets>"
			}
			fix = fmt.Sprintf("namespace %s enforces PodSecurity level %s (label %s): make the pod meet it (a spec.patches entry for its securityContext), or lower the namespace's level",
				env.Namespace, level, podSecurityEnforce)
			if r := preRenderedEnforce(env); r != "" {
				// Relabelling by hand would not last: apply writes the rendered labels.
				fix += fmt.Sprintf(" with spec.tenancy.podSecurity: warn (the platform renders %s=%s)", podSecurityEnforce, r)
			} else {
				fix += fmt.Sprintf(": kubectl label namespace %s %s=%s --overwrite", env.Namespace, podSecurityEnforce, lower)
			}
		}
		out = append(out, Finding{Severity: SeverityError, Object: k, Evidence: msg, Fix: fix})
	}
	return out
}

const podSecurityEnforce = "pod-security.kubernetes.io/enforce"

// preRenderedEnforce is the PodSecurity level the platform's own Namespace object sets,
// "" when it renders no Namespace of that name.
func preRenderedEnforce(env *Env) string {
	for _, o := range env.Rendered() {
		if o.GetKind() == "Namespace" && o.GetName() == env.Namespace {
			return o.GetLabels()[podSecurityEnforce]
		}
	}
	return ""
}

// preObject is kind/name of an object, lower-case as kubectl prints it.
func preObject(o *unstructured.Unstructured) string {
	return strings.ToLower(o.GetKind()) + "/" + o.GetName()
}
