/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
)

// installOptions is one fixed set of options, as `watch install --image ... -n onto-watch
// --namespaces team-b,team-a` gives.
func installOptions() controller.InstallOptions {
	return controller.InstallOptions{Image: "registry.example/kubectl-onto:1.0.0", Namespace: "onto-watch", Namespaces: []string{"team-b", "team-a"}}
}

func installObjects(t *testing.T, o controller.InstallOptions) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controller.InstallObjects(o)
	if err != nil {
		t.Fatalf("InstallObjects: %v", err)
	}
	return objs
}

// names lists "Kind namespace/name" per object, in order.
func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			var typed T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &typed); err != nil {
				t.Fatal(err)
			}
			return &typed
		}
	}
	t.Fatalf("no %s %s among %v", kind, name, names(objs))
	return nil
}

// TestInstallObjects: which objects each choice of watched namespaces gives, and the
// watch's arguments.
func TestInstallObjects(t *testing.T) {
	tests := []struct {
		name     string
		opts     controller.InstallOptions
		want     []string
		wantArgs string
		// the container's memory request and limit: more for each watched namespace
		wantMemory [2]string
	}{
		{
			name: "namespaces",
			opts: installOptions(),
			want: []string{
				"Namespace /onto-watch",
				"ServiceAccount onto-watch/kubectl-onto-watch",
				"ValidatingAdmissionPolicy /kubectl-onto-watch.onto-watch.writes-only-in-platform-namespaces",
				"ValidatingAdmissionPolicyBinding /kubectl-onto-watch.onto-watch.writes-only-in-platform-namespaces",
				"ValidatingAdmissionPolicy /kubectl-onto-watch.onto-watch.no-escalation",
				"ValidatingAdmissionPolicyBinding /kubectl-onto-watch.onto-watch.no-escalation",
				"ClusterRole /kubectl-onto-watch",
				"ClusterRole /kubectl-onto-watch:onto-watch",
				"ClusterRoleBinding /kubectl-onto-watch:onto-watch",
				"RoleBinding team-a/kubectl-onto-watch:onto-watch",
				"RoleBinding team-b/kubectl-onto-watch:onto-watch",
				"Role onto-watch/kubectl-onto-watch-leader-election",
				"RoleBinding onto-watch/kubectl-onto-watch-leader-election",
				"Deployment onto-watch/kubectl-onto-watch",
				"Service onto-watch/kubectl-onto-watch-metrics",
			},
			wantArgs:   "watch --leader-elect --leader-election-namespace=onto-watch --metrics-bind-address=:8080 --health-probe-bind-address=:8081 --namespaces=team-a,team-b",
			wantMemory: [2]string{"134Mi", "520Mi"},
		},
		{
			name: "own namespace by default",
			opts: controller.InstallOptions{Image: "img", Namespace: "kubectl-onto-system"},
			want: []string{
				"Namespace /kubectl-onto-system",
				"ServiceAccount kubectl-onto-system/kubectl-onto-watch",
				"ValidatingAdmissionPolicy /kubectl-onto-watch.kubectl-onto-system.writes-only-in-platform-namespaces",
				"ValidatingAdmissionPolicyBinding /kubectl-onto-watch.kubectl-onto-system.writes-only-in-platform-namespaces",
				"ValidatingAdmissionPolicy /kubectl-onto-watch.kubectl-onto-system.no-escalation",
				"ValidatingAdmissionPolicyBinding /kubectl-onto-watch.kubectl-onto-system.no-escalation",
				"ClusterRole /kubectl-onto-watch",
				"ClusterRole /kubectl-onto-watch:kubectl-onto-system",
				"ClusterRoleBinding /kubectl-onto-watch:kubectl-onto-system",
				"RoleBinding kubectl-onto-system/kubectl-onto-watch:kubectl-onto-system",
				"Role kubectl-onto-system/kubectl-onto-watch-leader-election",
				"RoleBinding kubectl-onto-system/kubectl-onto-watch-leader-election",
				"Deployment kubectl-onto-system/kubectl-onto-watch",
				"Service kubectl-onto-system/kubectl-onto-watch-metrics",
			},
			wantArgs:   "watch --leader-elect --leader-election-namespace=kubectl-onto-system --metrics-bind-address=:8080 --health-probe-bind-address=:8081 --namespaces=kubectl-onto-system",
			wantMemory: [2]string{"131Mi", "516Mi"},
		},
		{
			name: "all namespaces",
			opts: controller.InstallOptions{Image: "img", Namespace: "ops", AllNamespaces: true, Replicas: 3},
			want: []string{
				"Namespace /ops",
				"ServiceAccount ops/kubectl-onto-watch",
				"ValidatingAdmissionPolicy /kubectl-onto-watch.ops.writes-only-in-platform-namespaces",
				"ValidatingAdmissionPolicyBinding /kubectl-onto-watch.ops.writes-only-in-platform-namespaces",
				"ValidatingAdmissionPolicy /kubectl-onto-watch.ops.no-escalation",
				"ValidatingAdmissionPolicyBinding /kubectl-onto-watch.ops.no-escalation",
				"ClusterRole /kubectl-onto-watch",
				"ClusterRole /kubectl-onto-watch:ops",
				"ClusterRoleBinding /kubectl-onto-watch:ops",
				"ClusterRoleBinding /kubectl-onto-watch:ops:all-namespaces",
				"Role ops/kubectl-onto-watch-leader-election",
				"RoleBinding ops/kubectl-onto-watch-leader-election",
				"Deployment ops/kubectl-onto-watch",
				"Service ops/kubectl-onto-watch-metrics",
			},
			wantArgs:   "watch --leader-elect --leader-election-namespace=ops --metrics-bind-address=:8080 --health-probe-bind-address=:8081 --all-namespaces",
			wantMemory: [2]string{"128Mi", "512Mi"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := installObjects(t, tc.opts)
			if got := names(objs); !slices.Equal(got, tc.want) {
				t.Fatalf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			dep := find[appsv1.Deployment](t, objs, "Deployment", controller.DefaultInstallName)
			if got := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); got != tc.wantArgs {
				t.Errorf("args %q, want %q", got, tc.wantArgs)
			}
			res := dep.Spec.Template.Spec.Containers[0].Resources
			if got := [2]string{res.Requests.Memory().String(), res.Limits.Memory().String()}; got != tc.wantMemory {
				t.Errorf("memory request and limit %v, want %v", got, tc.wantMemory)
			}
			replicas := max(tc.opts.Replicas, 2)
			if *dep.Spec.Replicas != replicas {
				t.Errorf("replicas %d, want %d", *dep.Spec.Replicas, replicas)
			}
		})
	}
}

func TestInstallObjectsRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts controller.InstallOptions
		want string
	}{
		{"no image", controller.InstallOptions{Namespace: "ns"}, "an image is required"},
		{"no namespace", controller.InstallOptions{Image: "img"}, "namespace is required"},
		{"both namespace choices", controller.InstallOptions{Image: "img", Namespace: "ns", Namespaces: []string{"a"}, AllNamespaces: true}, "exclude each other"},
		{"bad watched namespace", controller.InstallOptions{Image: "img", Namespace: "ns", Namespaces: []string{"Team_A"}}, `namespace "Team_A"`},
		{"negative replicas", controller.InstallOptions{Image: "img", Namespace: "ns", Replicas: -1}, "at least 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := controller.InstallObjects(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// rules are every RBAC rule the install grants, each named by its role.
func rules(t *testing.T, objs []*unstructured.Unstructured) map[string][]rbacv1.PolicyRule {
	t.Helper()
	out := map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			out["ClusterRole "+o.GetName()] = find[rbacv1.ClusterRole](t, objs, o.GetKind(), o.GetName()).Rules
		case "Role":
			out["Role "+o.GetName()] = find[rbacv1.Role](t, objs, o.GetKind(), o.GetName()).Rules
		}
	}
	return out
}

// TestInstallRulesHaveNoWildcard: no rule of any role of the install, with any choice
// of namespaces, has "*" in its API groups, resources, verbs or names, or grants
// anything outside API groups and resources (non-resource URLs).
func TestInstallRulesHaveNoWildcard(t *testing.T) {
	for _, o := range []controller.InstallOptions{installOptions(), {Image: "img", Namespace: "ops", AllNamespaces: true}} {
		for role, rs := range rules(t, installObjects(t, o)) {
			if len(rs) == 0 {
				t.Errorf("%s has no rules", role)
			}
			for i, r := range rs {
				for field, values := range map[string][]string{"apiGroups": r.APIGroups, "resources": r.Resources, "verbs": r.Verbs, "resourceNames": r.ResourceNames} {
					for _, v := range values {
						if strings.Contains(v, "*") {
							t.Errorf("%s rule %d: %s has %q", role, i, field, v)
						}
					}
				}
				if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 || len(r.NonResourceURLs) > 0 {
					t.Errorf("%s rule %d is not a resource rule with groups, resources and verbs: %+v", role, i, r)
				}
			}
		}
	}
}

// allows reports whether rules grant verb on group/resource (named name).
func allows(rules []rbacv1.PolicyRule, group, resource, verb, name string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name)) {
			return true
		}
	}
	return false
}

// TestInstallRulesCoverRenderedKinds: every kind the richest example renders is one
// the watch may plan, apply, wait for and delete (the Namespace: read, list, apply) —
// a kind a new release renders fails here until it has its rule.
func TestInstallRulesCoverRenderedKinds(t *testing.T) {
	namespaced := controller.NamespacedRules()
	cluster, err := controller.ClusterRules([]string{"onto-system"})
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "platform.yaml", "onto-system")
	d := ontotest.Desired(t, p)
	for _, obj := range d.Objects() {
		gvk := obj.GroupVersionKind()
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		if gvk.Group == "" && gvk.Kind == "Namespace" {
			for _, verb := range []string{"get", "patch"} {
				if !allows(cluster, "", "namespaces", verb, obj.GetName()) {
					t.Errorf("cluster rules do not allow %s of Namespace %s", verb, obj.GetName())
				}
			}
			if !allows(cluster, "", "namespaces", "list", "") {
				t.Error("cluster rules do not allow listing namespaces")
			}
			continue
		}
		for _, verb := range []string{"get", "list", "watch", "create", "patch", "delete"} {
			if !allows(namespaced, gvk.Group, plural.Resource, verb, obj.GetName()) {
				t.Errorf("namespaced rules do not allow %s of %s (%s %s)", verb, plural.GroupResource(), gvk.Kind, obj.GetName())
			}
		}
	}
	if !allows(cluster, "apiextensions.k8s.io", "customresourcedefinitions", "get", d.CRD.GetName()) {
		t.Errorf("cluster rules do not allow reading CRD %s", d.CRD.GetName())
	}
	if allows(cluster, "", "namespaces", "patch", "kube-system") {
		t.Error("a namespaced watch may patch namespace kube-system, which it does not watch")
	}
}

// TestInstallDeploymentIsRestricted: the watch's pod template passes the PodSecurity
// restricted level (the API server's own evaluator), and is hardened beyond it.
func TestInstallDeploymentIsRestricted(t *testing.T) {
	dep := find[appsv1.Deployment](t, installObjects(t, installOptions()), "Deployment", controller.DefaultInstallName)
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	tpl := dep.Spec.Template
	if res := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &tpl.ObjectMeta, &tpl.Spec)); !res.Allowed {
		t.Fatalf("violates PodSecurity restricted: %s", res.ForbiddenDetail())
	}
	psc := tpl.Spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != 65532 || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("pod security context %+v: want runAsNonRoot and runAsUser 65532", psc)
	}
	if tpl.Spec.AutomountServiceAccountToken == nil || !*tpl.Spec.AutomountServiceAccountToken || tpl.Spec.ServiceAccountName != controller.DefaultInstallName {
		t.Errorf("the pod must mount the token of ServiceAccount %s", controller.DefaultInstallName)
	}
	if len(tpl.Spec.TopologySpreadConstraints) == 0 && tpl.Spec.Affinity == nil {
		t.Error("replicas are not spread over nodes")
	}
	for _, c := range tpl.Spec.Containers {
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: root filesystem is writable", c.Name)
		}
		for _, r := range []string{"cpu", "memory", "ephemeral-storage"} {
			if _, ok := c.Resources.Requests[corev1.ResourceName(r)]; !ok {
				t.Errorf("%s: no %s request", c.Name, r)
			}
			if _, ok := c.Resources.Limits[corev1.ResourceName(r)]; !ok {
				t.Errorf("%s: no %s limit", c.Name, r)
			}
		}
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
			c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("%s: want liveness /healthz and readiness /readyz", c.Name)
		}
	}
}

// TestInstallDeploymentWritesOnlyToAnEmptyDir: with the root filesystem read-only, the
// container's one writable place is an emptyDir at /tmp, bounded below its
// ephemeral-storage limit, and HOME points into it (the image's home is read-only).
func TestInstallDeploymentWritesOnlyToAnEmptyDir(t *testing.T) {
	dep := find[appsv1.Deployment](t, installObjects(t, installOptions()), "Deployment", controller.DefaultInstallName)
	spec := dep.Spec.Template.Spec
	if len(spec.Volumes) != 1 || spec.Volumes[0].EmptyDir == nil || spec.Volumes[0].EmptyDir.SizeLimit == nil {
		t.Fatalf("volumes %+v: want one emptyDir with a size limit", spec.Volumes)
	}
	vol := spec.Volumes[0]
	c := spec.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Fatal("the root filesystem is writable")
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != vol.Name || c.VolumeMounts[0].MountPath != controller.TempDir || c.VolumeMounts[0].ReadOnly {
		t.Errorf("mounts %+v: want %s writable at %s", c.VolumeMounts, vol.Name, controller.TempDir)
	}
	if limit := c.Resources.Limits[corev1.ResourceEphemeralStorage]; vol.EmptyDir.SizeLimit.Cmp(limit) >= 0 {
		t.Errorf("emptyDir size limit %s not below the ephemeral-storage limit %s", vol.EmptyDir.SizeLimit, &limit)
	}
	var home string
	for _, e := range c.Env {
		if e.Name == "HOME" {
			home = e.Value
		}
	}
	if home != controller.TempDir && !strings.HasPrefix(home, controller.TempDir+"/") {
		t.Errorf("HOME %q: want it under %s", home, controller.TempDir)
	}
}

// TestInstallRulesCannotEscalate: with any choice of namespaces, no role of the
// install writes RBAC, escalates or binds a role, impersonates, mints a token for
// another ServiceAccount (serviceaccounts/token), signs certificates, or reaches into
// a pod or node (exec, attach, port-forward, proxy); nor writes admission policies,
// webhooks or CRDs other than the OntoPlatform one (a dry-run, which the admission
// policy limits it to).
func TestInstallRulesCannotEscalate(t *testing.T) {
	writes := []string{"create", "update", "patch", "delete", "deletecollection"}
	forbidden := []struct{ group, resource, verb string }{
		{"", "serviceaccounts/token", "create"},
		{"", "pods/exec", "create"},
		{"", "pods/attach", "create"},
		{"", "pods/portforward", "create"},
		{"", "pods/proxy", "get"},
		{"", "nodes/proxy", "get"},
		{"", "services/proxy", "get"},
		{"", "users", "impersonate"},
		{"", "groups", "impersonate"},
		{"", "serviceaccounts", "impersonate"},
		{"authentication.k8s.io", "userextras", "impersonate"},
		{"authentication.k8s.io", "uids", "impersonate"},
		{"certificates.k8s.io", "certificatesigningrequests", "create"},
		{"certificates.k8s.io", "certificatesigningrequests/approval", "update"},
		{"certificates.k8s.io", "signers", "approve"},
		{"certificates.k8s.io", "signers", "sign"},
		{"", "nodes", "patch"},
		{"", "pods", "create"},
		{"apps", "daemonsets", "create"},
	}
	for _, group := range []string{"admissionregistration.k8s.io", "rbac.authorization.k8s.io"} {
		for _, res := range []string{"clusterroles", "roles", "clusterrolebindings", "rolebindings", "validatingadmissionpolicies",
			"validatingadmissionpolicybindings", "validatingwebhookconfigurations", "mutatingwebhookconfigurations", "mutatingadmissionpolicies"} {
			for _, verb := range append([]string{"escalate", "bind"}, writes...) {
				forbidden = append(forbidden, struct{ group, resource, verb string }{group, res, verb})
			}
		}
	}
	for _, o := range []controller.InstallOptions{installOptions(), {Image: "img", Namespace: "ops", AllNamespaces: true}} {
		for role, rs := range rules(t, installObjects(t, o)) {
			for _, f := range forbidden {
				if allows(rs, f.group, f.resource, f.verb, "") {
					t.Errorf("%s (all namespaces %v) allows %s %s/%s", role, o.AllNamespaces, f.verb, f.group, f.resource)
				}
			}
			for _, r := range rs {
				if slices.Contains(r.APIGroups, "rbac.authorization.k8s.io") || slices.Contains(r.APIGroups, "admissionregistration.k8s.io") {
					t.Errorf("%s has a rule on %v: %+v", role, r.APIGroups, r)
				}
				if slices.Contains(r.APIGroups, "apiextensions.k8s.io") && len(r.ResourceNames) != 1 {
					t.Errorf("%s: CRD rule not limited to the OntoPlatform CRD: %+v", role, r)
				}
			}
		}
	}
}

// TestAdmissionPolicies: the install's two policies fail closed, bind to its
// ServiceAccount alone and take no params; every validation says why.
func TestAdmissionPolicies(t *testing.T) {
	o := installOptions()
	objs := installObjects(t, o)
	user := "system:serviceaccount:onto-watch:kubectl-onto-watch"
	for _, suffix := range []string{controller.PolicyPlatformNamespaces, controller.PolicySafeWrites} {
		name := controller.PolicyName(controller.DefaultInstallName, o.Namespace, suffix)
		pol := find[admissionv1.ValidatingAdmissionPolicy](t, objs, "ValidatingAdmissionPolicy", name)
		b := find[admissionv1.ValidatingAdmissionPolicyBinding](t, objs, "ValidatingAdmissionPolicyBinding", name)
		if pol.Spec.FailurePolicy == nil || *pol.Spec.FailurePolicy != admissionv1.Fail {
			t.Errorf("%s: failurePolicy %v, want Fail", name, pol.Spec.FailurePolicy)
		}
		if len(pol.Spec.MatchConditions) == 0 || pol.Spec.MatchConditions[0].Expression != `request.userInfo.username == "`+user+`"` {
			t.Errorf("%s: first match condition %+v, want the ServiceAccount's user name", name, pol.Spec.MatchConditions)
		}
		if b.Spec.PolicyName != name || !slices.Equal(b.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
			t.Errorf("binding %s: policy %q, actions %v", name, b.Spec.PolicyName, b.Spec.ValidationActions)
		}
		if b.Spec.MatchResources != nil {
			t.Errorf("binding %s narrows the policy's resources: %+v", name, b.Spec.MatchResources)
		}
		for i, v := range pol.Spec.Validations {
			if v.Reason == nil || *v.Reason != metav1.StatusReasonForbidden {
				t.Errorf("%s validation %d: reason %v, want Forbidden", name, i, v.Reason)
			}
			if v.Message == "" && v.MessageExpression == "" {
				t.Errorf("%s validation %d has no message: %s", name, i, v.Expression)
			}
		}
		if pol.Spec.ParamKind != nil || b.Spec.ParamRef != nil {
			// Params are looked up before matchConditions: a binding denying
			// without them would refuse every user, not only the watch.
			t.Errorf("%s takes params", name)
		}
	}
	// Two watches in one cluster have policies of their own.
	other := installObjects(t, controller.InstallOptions{Image: "img", Namespace: "ops", AllNamespaces: true})
	find[admissionv1.ValidatingAdmissionPolicy](t, other, "ValidatingAdmissionPolicy", "kubectl-onto-watch.ops."+controller.PolicySafeWrites)
}
