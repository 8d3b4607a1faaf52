/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"fmt"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// Suffixes of the names of the watch's two ValidatingAdmissionPolicies (and their
// bindings): <name>.<namespace>.<suffix>. They read as the reason in the API server's
// refusal, which names the policy.
const (
	PolicyPlatformNamespaces = "writes-only-in-platform-namespaces"
	PolicySafeWrites         = "no-escalation"
)

// WatchNamespaceLabel set to WatchNamespaceEnabled, by someone allowed to label
// namespaces, opens a namespace to the installed watch where no `kubectl onto apply`
// has labelled it as a platform's (an OntoPlatform created by GitOps alone).
const (
	WatchNamespaceLabel   = "onto.paas/watch"
	WatchNamespaceEnabled = "enabled"
)

// PolicyName is the name of the watch's ValidatingAdmissionPolicy (and of its binding)
// with suffix, for the watch named name in namespace.
func PolicyName(name, namespace, suffix string) string {
	return name + "." + namespace + "." + suffix
}

// ServiceAccountUser is the user name the API server gives the watch's
// ServiceAccount.
func ServiceAccountUser(name, namespace string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Label prefixes the watch may change on a platform's Namespace: the platform's own
// labels, its inventory's, and PodSecurity's (only made stricter).
var namespaceLabelPrefixes = []string{"app.kubernetes.io/", "applyset.kubernetes.io/", "onto.paas/", "pod-security.kubernetes.io/"}

// namespaceAnnotationPrefixes are those of the annotations it may change there.
var namespaceAnnotationPrefixes = []string{"applyset.kubernetes.io/", "onto.paas/"}

// AdmissionPolicies are what RBAC cannot say about the watch's ServiceAccount, as
// ValidatingAdmissionPolicies bound to it alone (matchConditions on its user name),
// failing closed:
//
//   - PolicyPlatformNamespaces: it writes (creates, updates, deletes, any subresource)
//     only in a platform's namespace, and patches only such a Namespace: one labelled
//     with the inventory label (inventory.PartOfLabel, which `kubectl onto apply` sets,
//     as the user, on the platform's Namespace) or WatchNamespaceLabel=enabled. It
//     cannot label a namespace that has neither, so it cannot open one for itself.
//     Left out: its leader election Lease and Events in its own namespace, and what
//     the end of an uninstall writes once the namespace left the inventory (the
//     OntoPlatform, its lock Lease onto-lock-*, events.k8s.io Events about an
//     OntoPlatform).
//   - PolicySafeWrites: never a Secret of type kubernetes.io/service-account-token;
//     never a pod template (Deployment, StatefulSet, Job and the other workload kinds)
//     that is privileged, uses a host namespace, a host port or a hostPath volume, or
//     adds a capability; never a Service with externalIPs; never a Namespace created or
//     deleted, nor a label or annotation of one changed outside this tool's prefixes,
//     nor its pod-security.kubernetes.io labels removed or relaxed (only set to
//     restricted, at a version no older than the one this release renders); the
//     OntoPlatform CRD only dry-run, never written.
//
// Not "where an OntoPlatform lives" by params (paramKind OntoPlatform, looked up in
// the request's namespace): the API server looks params up before it evaluates
// matchConditions, so a binding that denies without params refuses every user's
// writes in every namespace without an OntoPlatform, not only the watch's.
func AdmissionPolicies(name, namespace string) []runtime.Object {
	user := ServiceAccountUser(name, namespace)
	isWatch := admissionv1.MatchCondition{Name: "the-watch", Expression: fmt.Sprintf("request.userInfo.username == %s", celString(user))}
	fail := admissionv1.Fail
	allOps := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete}
	writes := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	rule := func(groups, resources []string, ops []admissionv1.OperationType, scope admissionv1.ScopeType) admissionv1.NamedRuleWithOperations {
		return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: groups, APIVersions: []string{"*"}, Resources: resources, Scope: &scope},
		}}
	}

	gateName := PolicyName(name, namespace, PolicyPlatformNamespaces)
	marked := func(ns string) string {
		return fmt.Sprintf("%[1]s != null && has(%[1]s.metadata.labels) && (%[2]s in %[1]s.metadata.labels || (%[3]s in %[1]s.metadata.labels && %[1]s.metadata.labels[%[3]s] == %[4]s))",
			ns, celString(inventory.PartOfLabel), celString(WatchNamespaceLabel), celString(WatchNamespaceEnabled))
	}
	gate := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: gateName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{
				rule([]string{"*"}, []string{"*/*"}, allOps, admissionv1.NamespacedScope),
				rule([]string{""}, []string{"namespaces"}, []admissionv1.OperationType{admissionv1.Update, admissionv1.Delete}, admissionv1.ClusterScope),
			}},
			MatchConditions: []admissionv1.MatchCondition{
				isWatch,
				{Name: "not-its-leader-election", Expression: fmt.Sprintf(
					"!(request.namespace == %s && ((request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases') || (request.resource.group == '' && request.resource.resource == 'events')))",
					celString(namespace))},
			},
			Variables: []admissionv1.Variable{
				// A Namespace's own request has no namespaceObject: the Namespace
				// as it was is what says whether it is managed.
				{Name: "ns", Expression: "request.resource.group == '' && request.resource.resource == 'namespaces' ? oldObject : namespaceObject"},
				{Name: "managed", Expression: marked("variables.ns")},
				// What the end of an uninstall writes after the namespace left the
				// inventory: the OntoPlatform (its finalizer), its lock's Lease, and
				// Events about it. None of them opens anything.
				{Name: "platformOwn", Expression: "request.resource.group == " + celString(v1alpha1.GroupVersion.Group) + " || " +
					"(request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases' && request.name.startsWith('onto-lock-')) || " +
					"(request.resource.group == 'events.k8s.io' && request.resource.resource == 'events' && object != null && has(object.regarding) && " +
					"has(object.regarding.kind) && object.regarding.kind == " + celString(v1alpha1.Kind) + ")"},
			},
			Validations: []admissionv1.Validation{{
				Expression: "variables.managed || variables.platformOwn",
				MessageExpression: fmt.Sprintf("'the watch writes only in a platform\\'s namespace: namespace ' + request.namespace + "+
					"' has neither the label %s (kubectl onto apply sets it) nor %s=%s'", inventory.PartOfLabel, WatchNamespaceLabel, WatchNamespaceEnabled),
			}},
		},
	}

	pss := render.PodSecurityVersion
	minor, err := strconv.Atoi(strings.TrimPrefix(pss, "v1."))
	if err != nil {
		panic(fmt.Sprintf("render.PodSecurityVersion %q is not v1.<minor>", pss))
	}
	safeName := PolicyName(name, namespace, PolicySafeWrites)
	safe := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: safeName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{
				rule([]string{""}, []string{"secrets", "services", "pods"}, writes, admissionv1.NamespacedScope),
				rule([]string{"apps"}, []string{"deployments", "statefulsets", "daemonsets", "replicasets"}, writes, admissionv1.NamespacedScope),
				rule([]string{"batch"}, []string{"jobs", "cronjobs"}, writes, admissionv1.NamespacedScope),
				rule([]string{""}, []string{"namespaces"}, allOps, admissionv1.ClusterScope),
				rule([]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, allOps, admissionv1.ClusterScope),
			}},
			MatchConditions: []admissionv1.MatchCondition{isWatch},
			Variables: []admissionv1.Variable{
				{Name: "resource", Expression: "request.resource.resource"},
				{Name: "podSpec", Expression: "object == null ? null : " +
					"variables.resource == 'pods' ? object.spec : " +
					"variables.resource == 'cronjobs' ? object.spec.jobTemplate.spec.template.spec : " +
					"variables.resource in ['deployments', 'statefulsets', 'daemonsets', 'replicasets', 'jobs'] ? object.spec.template.spec : null"},
				{Name: "containers", Expression: "variables.podSpec == null ? [] : " +
					"(has(variables.podSpec.containers) ? variables.podSpec.containers : []) + " +
					"(has(variables.podSpec.initContainers) ? variables.podSpec.initContainers : []) + " +
					"(has(variables.podSpec.ephemeralContainers) ? variables.podSpec.ephemeralContainers : [])"},
				{Name: "namespaceUpdate", Expression: "variables.resource == 'namespaces' && request.operation == 'UPDATE'"},
				{Name: "oldLabels", Expression: "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"},
				{Name: "newLabels", Expression: "object != null && has(object.metadata.labels) ? object.metadata.labels : {}"},
				{Name: "changedLabels", Expression: "variables.oldLabels.filter(k, !(k in variables.newLabels) || variables.newLabels[k] != variables.oldLabels[k]) + " +
					"variables.newLabels.filter(k, !(k in variables.oldLabels))"},
				{Name: "oldAnnotations", Expression: "oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
				{Name: "newAnnotations", Expression: "object != null && has(object.metadata.annotations) ? object.metadata.annotations : {}"},
				{Name: "changedAnnotations", Expression: "variables.oldAnnotations.filter(k, !(k in variables.newAnnotations) || variables.newAnnotations[k] != variables.oldAnnotations[k]) + " +
					"variables.newAnnotations.filter(k, !(k in variables.oldAnnotations))"},
			},
			Validations: []admissionv1.Validation{
				{
					Expression: "variables.resource != 'secrets' || object == null || !has(object.type) || object.type != 'kubernetes.io/service-account-token'",
					Message:    "the watch never writes a Secret of type kubernetes.io/service-account-token: the token controller would fill it with a token of the ServiceAccount it names",
				},
				{
					Expression: "variables.podSpec == null || !(" +
						"(has(variables.podSpec.hostNetwork) && variables.podSpec.hostNetwork) || " +
						"(has(variables.podSpec.hostPID) && variables.podSpec.hostPID) || " +
						"(has(variables.podSpec.hostIPC) && variables.podSpec.hostIPC))",
					Message: "the watch never writes a pod template that shares the node's network, PID or IPC namespace (hostNetwork, hostPID, hostIPC)",
				},
				{
					Expression: "variables.podSpec == null || !has(variables.podSpec.volumes) || variables.podSpec.volumes.all(v, !has(v.hostPath))",
					Message:    "the watch never writes a pod template with a hostPath volume",
				},
				{
					Expression: "variables.containers.all(c, !has(c.securityContext) || !has(c.securityContext.privileged) || !c.securityContext.privileged)",
					Message:    "the watch never writes a pod template with a privileged container",
				},
				{
					Expression: "variables.containers.all(c, !has(c.securityContext) || !has(c.securityContext.capabilities) || " +
						"!has(c.securityContext.capabilities.add) || size(c.securityContext.capabilities.add) == 0)",
					Message: "the watch never writes a pod template whose containers add capabilities",
				},
				{
					Expression: "variables.containers.all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0))",
					Message:    "the watch never writes a pod template with a host port",
				},
				{
					Expression: "variables.resource != 'services' || object == null || !has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0",
					Message:    "the watch never writes a Service with externalIPs (they can intercept another workload's traffic)",
				},
				{
					Expression: "variables.resource != 'namespaces' || request.operation == 'UPDATE'",
					Message:    "the watch never creates or deletes a Namespace",
				},
				{
					Expression: fmt.Sprintf("!variables.namespaceUpdate || variables.changedLabels.filter(k, k.startsWith('pod-security.kubernetes.io/')).all(k, "+
						"k in variables.newLabels && (k.endsWith('-version') ? "+
						"(variables.newLabels[k].matches('^v1[.][0-9]+$') && int(variables.newLabels[k].substring(3)) >= %d) : "+
						"variables.newLabels[k] == 'restricted'))", minor),
					Message: fmt.Sprintf("the watch never removes or relaxes a Namespace's pod-security.kubernetes.io labels: it sets them only to restricted, at version %s or later", pss),
				},
				{
					Expression: "!variables.namespaceUpdate || variables.changedLabels.all(k, " + startsWithAny("k", namespaceLabelPrefixes) + ")",
					Message:    "the watch changes only its own labels on a Namespace (" + strings.Join(namespaceLabelPrefixes, ", ") + ")",
				},
				{
					Expression: "!variables.namespaceUpdate || variables.changedAnnotations.all(k, " + startsWithAny("k", namespaceAnnotationPrefixes) + ")",
					Message:    "the watch changes only its own annotations on a Namespace (" + strings.Join(namespaceAnnotationPrefixes, ", ") + ")",
				},
				{
					Expression: "variables.resource != 'customresourcedefinitions' || (has(request.dryRun) && request.dryRun)",
					Message:    "the watch only reads and dry-runs the OntoPlatform CRD: kubectl onto apply installs and upgrades it",
				},
			},
		},
	}

	// Refusals are 403 Forbidden, as RBAC's, not 422 Invalid (the default): the
	// request is not malformed, the watch may not make it.
	forbidden := metav1.StatusReasonForbidden
	for _, pol := range []*admissionv1.ValidatingAdmissionPolicy{gate, safe} {
		for i := range pol.Spec.Validations {
			pol.Spec.Validations[i].Reason = &forbidden
		}
	}

	binding := func(policy string, paramRef *admissionv1.ParamRef) *admissionv1.ValidatingAdmissionPolicyBinding {
		return &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy,
				ParamRef:          paramRef,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			},
		}
	}
	return []runtime.Object{
		gate,
		binding(gateName, nil),
		safe,
		binding(safeName, nil),
	}
}

// celString quotes s as a CEL string literal.
func celString(s string) string {
	return strconv.Quote(s)
}

// startsWithAny is a CEL expression: v starts with one of prefixes.
func startsWithAny(v string, prefixes []string) string {
	parts := make([]string, len(prefixes))
	for i, p := range prefixes {
		parts[i] = v + ".startsWith(" + celString(p) + ")"
	}
	return "(" + strings.Join(parts, " || ") + ")"
}
