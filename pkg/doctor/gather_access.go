/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"context"
	"slices"
	"sort"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// applyVerbs are the verbs apply uses on every object it writes: read it, apply it
// (create or patch), prune it.
var applyVerbs = []string{"get", "list", "create", "patch", "delete"}

// resourceNeed is one resource, where, and the verbs a run uses on it.
type resourceNeed struct {
	group, resource, namespace string
	verbs                      []string
}

// needs lists every verb apply uses on every kind the platform renders, plus what every
// run uses besides: the platform itself and its status, the lock lease, revision
// Secrets, and the reads of waits (pods, events, ReplicaSets).
func (g *Gatherer) needs(env *Env) []resourceNeed {
	ns := env.Namespace
	byKey := map[string]*resourceNeed{}
	add := func(group, resource, namespace string, verbs ...string) {
		k := group + "/" + resource + "@" + namespace
		n := byKey[k]
		if n == nil {
			n = &resourceNeed{group: group, resource: resource, namespace: namespace}
			byKey[k] = n
		}
		for _, v := range verbs {
			if !slices.Contains(n.verbs, v) {
				n.verbs = append(n.verbs, v)
			}
		}
	}
	objs := env.Rendered()
	if env.Desired != nil {
		objs = append(objs, env.Desired.CRD, env.Desired.Platform)
	}
	for _, obj := range objs {
		mapping, err := g.Clients.Mapping(obj)
		if err != nil {
			continue // not served: PRE-006
		}
		namespace := ""
		if mapping.Scope.Name() == "namespace" {
			namespace = ns
		}
		add(mapping.Resource.Group, mapping.Resource.Resource, namespace, applyVerbs...)
		if health.IsJob(obj) {
			// A plane waits for its Jobs as for its workloads.
			add(mapping.Resource.Group, mapping.Resource.Resource, namespace, "watch")
		}
	}
	add("", "namespaces", "", "get", "create", "patch")
	add(v1alpha1.GroupVersion.Group, "ontoplatforms/status", ns, "get", "patch", "update")
	add("coordination.k8s.io", "leases", ns, "get", "create", "update", "delete")
	add("", "secrets", ns, "get", "list", "create", "patch", "delete")
	add("", "pods", ns, "get", "list", "watch")
	add("", "events", ns, "list", "watch")
	add("apps", "replicasets", ns, "get", "list")
	add("apps", "deployments", ns, "watch")
	add("apps", "statefulsets", ns, "watch")
	out := make([]resourceNeed, 0, len(byKey))
	for _, n := range byKey {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		if out[i].resource != out[j].resource {
			return out[i].resource < out[j].resource
		}
		return out[i].namespace < out[j].namespace
	})
	return out
}

// access answers each need: a SelfSubjectRulesReview per namespace settles what its
// rules allow; a SelfSubjectAccessReview asks about the rest (cluster-scoped resources,
// and whatever the rules do not show, since a rules review may be incomplete, for
// example with a webhook authorizer).
func (g *Gatherer) access(ctx context.Context, env *Env) ([]Access, error) {
	needs := g.needs(env)
	rules := map[string][]authorizationv1.ResourceRule{}
	for _, n := range needs {
		if n.namespace == "" {
			continue
		}
		if _, done := rules[n.namespace]; done {
			continue
		}
		r, err := g.Clients.Kube.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx,
			&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: n.namespace}}, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		rules[n.namespace] = r.Status.ResourceRules
	}
	var out []Access
	for _, n := range needs {
		for _, verb := range n.verbs {
			a := Access{Verb: verb, Group: n.group, Resource: n.resource, Namespace: n.namespace}
			if n.namespace != "" && rulesAllow(rules[n.namespace], n.group, n.resource, verb) {
				a.Allowed = true
				out = append(out, a)
				continue
			}
			res, sub := splitSubresource(n.resource)
			r, err := g.Clients.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: n.namespace, Verb: verb, Group: n.group, Resource: res, Subresource: sub,
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				return nil, err
			}
			a.Allowed, a.Reason = r.Status.Allowed, r.Status.Reason
			out = append(out, a)
		}
	}
	return out, nil
}

func splitSubresource(r string) (resource, sub string) {
	for i := range r {
		if r[i] == '/' {
			return r[:i], r[i+1:]
		}
	}
	return r, ""
}

// rulesAllow reports whether one of rules grants verb on group/resource, with RBAC's
// wildcards ("*" group, resource, verb; "*/status" style subresource wildcards).
func rulesAllow(rules []authorizationv1.ResourceRule, group, resource, verb string) bool {
	res, sub := splitSubresource(resource)
	for _, r := range rules {
		if !matches(r.APIGroups, group) || !matches(r.Verbs, verb) {
			continue
		}
		if len(r.ResourceNames) > 0 {
			continue // a rule for named objects does not cover creating new ones
		}
		for _, rr := range r.Resources {
			if rr == "*" || rr == resource || (sub != "" && rr == "*/"+sub) || (sub == "" && rr == res) {
				return true
			}
		}
	}
	return false
}

func matches(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}
