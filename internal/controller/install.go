/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// DefaultInstallName names the objects of an in-cluster watch: its ServiceAccount,
// Deployment and the ClusterRole of what it does in a watched namespace.
const DefaultInstallName = "kubectl-onto-watch"

// Ports of the in-cluster watch.
const (
	MetricsPort = 8080
	HealthPort  = 8081
)

// InstallOptions say how the watch runs in the cluster.
type InstallOptions struct {
	// Image runs the watch: its entrypoint must be kubectl-onto. Required.
	Image string
	// Namespace the watch runs in: its ServiceAccount, Deployment, metrics Service
	// and leader election Lease. Required.
	Namespace string
	// Namespaces the watch watches; empty, without AllNamespaces, is Namespace alone.
	Namespaces []string
	// AllNamespaces watches every namespace: its namespaced rules are bound
	// cluster-wide.
	AllNamespaces bool
	// Replicas of the watch; one of them, the leader, writes. 0 is 2.
	Replicas int32
	// Name of the watch's objects; DefaultInstallName when empty.
	Name string
}

// NamespacedRules are what the watch does in each namespace it watches, each rule
// with the code that needs it. A RoleBinding per watched namespace (a
// ClusterRoleBinding with --all-namespaces) grants them. No wildcard: a kind a future
// release renders needs a rule here, and TestInstallRulesCoverRenderedKinds says so.
func NamespacedRules() []rbacv1.PolicyRule {
	// The namespaced kinds a platform renders (pkg/render), by API group. The watch
	// plans them (list, server-side apply dry-run), applies them (a server-side apply
	// that creates needs create and patch), waits for them (watch), prunes and
	// uninstalls them (delete); it never sends them an update (PUT). Secrets are also
	// the revision snapshots (get, apply, prune), the generated credentials (create,
	// then a merge patch of the keys a newer release adds) and the certificates of
	// tlsEnabled (create, a merge patch to re-issue one).
	owned := []string{"get", "list", "watch", "create", "patch", "delete"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "resourcequotas", "secrets", "serviceaccounts", "services"}, Verbs: owned},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: owned},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: owned},
		{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"servicemonitors"}, Verbs: owned},
		// With spec.global.tls.issuerRef.
		{APIGroups: []string{"cert-manager.io"}, Resources: []string{"certificates"}, Verbs: owned},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "networkpolicies"}, Verbs: owned},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: owned},
		// Rendered Jobs (MinIO's user setup), and a release's migration Jobs during an
		// upgrade (pkg/upgrade migration.go: create, watch, delete).
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: owned},

		// The OntoPlatforms: the manager's cache (list, watch), the finalizer and the
		// inventory annotations (patch), the status (apply: patch; upgrade: update).
		// Never created or deleted: users and GitOps own them. No
		// ontoplatforms/finalizers: that subresource only guards blockOwnerDeletion
		// owner references (OwnerReferencesPermissionEnforcement), which this tool
		// never sets; the finalizer itself is a patch of the object.
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"ontoplatforms"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"ontoplatforms/status"}, Verbs: []string{"patch", "update"}},
		// The platform's lock (pkg/apply lock.go): taken, renewed, released.
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "delete"}},
		// Events on the OntoPlatform (events.k8s.io/v1 recorder); the core Events
		// of a StatefulSet that cannot create its pods are watched while a plane is
		// waited for (pkg/health).
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list", "watch"}},
		// Pods: waits and canary soaks watch them, a rollback deletes a StatefulSet's
		// broken pods; get and pods/eviction are for the pod remediation to come (both
		// grant nothing delete does not).
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
		// A Deployment's ReplicaSets, to tell its new pods from the old (pkg/health).
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list"}},
		// A StatefulSet's revisions, for the age of a crash-looping one (reactions).
		{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"get"}},
		// A StatefulSet recreated with larger volumes: its claims expanded (patch),
		// found by list; its stale status reset (pkg/apply replace.go).
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"list", "patch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets/status"}, Verbs: []string{"patch"}},
	}
}

// ClusterRules are what the watch does outside namespaces: read the OntoPlatform CRD
// (and dry-run it, when an upgrade plans it as the CLI does), plan and apply the
// platform's Namespace (a rendered, cluster-scoped member: listed by its inventory
// label, applied, released on uninstall), and read a StorageClass before growing
// volumes. namespaces limits get and patch of Namespaces to those; nil allows every
// one (--all-namespaces). Listing cannot be limited by name.
func ClusterRules(namespaces []string) ([]rbacv1.PolicyRule, error) {
	crd, err := plan.CRD()
	if err != nil {
		return nil, err
	}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: []string{crd.GetName()}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: namespaces, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}},
		// Nodes, for the lost-node and eviction reactions (cached, read-only).
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	}, nil
}

// LeaderElectionRules are what the watch does in its own namespace to elect a leader:
// the Lease (created once, then read and renewed by name) and the core Events
// controller-runtime records on it.
func LeaderElectionRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{LeaderElectionID}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
}

// complete validates o and fills in its defaults.
func (o InstallOptions) complete() (InstallOptions, error) {
	var errs []error
	if o.Image == "" {
		errs = append(errs, errors.New("an image is required: the watch runs kubectl-onto from it"))
	}
	if o.Name == "" {
		o.Name = DefaultInstallName
	}
	for _, msg := range validation.IsDNS1123Label(o.Name) {
		errs = append(errs, fmt.Errorf("name %q: %s", o.Name, msg))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("the watch's namespace is required"))
	}
	if o.Replicas == 0 {
		o.Replicas = 2
	}
	if o.Replicas < 0 {
		errs = append(errs, fmt.Errorf("replicas must be at least 1, not %d", o.Replicas))
	}
	if o.AllNamespaces && len(o.Namespaces) > 0 {
		errs = append(errs, errors.New("all namespaces and a list of namespaces exclude each other"))
	}
	watched := slices.Clone(o.Namespaces)
	if !o.AllNamespaces && len(watched) == 0 {
		watched = []string{o.Namespace}
	}
	slices.Sort(watched)
	o.Namespaces = slices.Compact(watched)
	for _, ns := range append([]string{o.Namespace}, o.Namespaces...) {
		if ns == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, fmt.Errorf("namespace %q: %s", ns, msg))
		}
	}
	if o.AllNamespaces {
		o.Namespaces = nil
	}
	return o, errors.Join(errs...)
}

// InstallObjects are the objects that run the watch in the cluster with least
// privilege, in apply order: its namespace (PodSecurity restricted), ServiceAccount,
// the ValidatingAdmissionPolicies bound to that ServiceAccount (AdmissionPolicies),
// RBAC (no wildcard), Deployment and metrics Service.
//
// RBAC is split by scope, since a RoleBinding grants only namespaced rules: the
// ClusterRole Name holds NamespacedRules, bound in each watched namespace (cluster-wide
// with AllNamespaces); the ClusterRole Name:Namespace holds ClusterRules, bound
// cluster-wide; a Role in the watch's namespace holds LeaderElectionRules. Objects
// outside the watch's namespace carry its name, so watches installed in two
// namespaces do not overwrite each other's bindings.
func InstallObjects(opts InstallOptions) ([]*unstructured.Unstructured, error) {
	o, err := opts.complete()
	if err != nil {
		return nil, err
	}
	clusterRules, err := ClusterRules(o.Namespaces)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		v1alpha1.LabelName:            "kubectl-onto",
		"app.kubernetes.io/component": "watch",
		v1alpha1.LabelInstance:        o.Name,
		v1alpha1.LabelManagedBy:       plan.FieldManager,
	}
	meta := func(name, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: o.Name, Namespace: o.Namespace}
	scoped := o.Name + ":" + o.Namespace

	ns := &corev1.Namespace{ObjectMeta: meta(o.Namespace, "")}
	ns.Labels = merge(labels, map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/audit":           "restricted",
		"pod-security.kubernetes.io/warn":            "restricted",
	})
	objs := []runtime.Object{
		ns,
		&corev1.ServiceAccount{ObjectMeta: meta(o.Name, o.Namespace), AutomountServiceAccountToken: ptr.To(true)},
	}
	// The admission policies before the RBAC that grants what they limit.
	for _, pol := range AdmissionPolicies(o.Name, o.Namespace) {
		pol.(metav1.Object).SetLabels(labels)
		objs = append(objs, pol)
	}
	objs = append(objs,
		&rbacv1.ClusterRole{ObjectMeta: meta(o.Name, ""), Rules: NamespacedRules()},
		&rbacv1.ClusterRole{ObjectMeta: meta(scoped, ""), Rules: clusterRules},
		&rbacv1.ClusterRoleBinding{ObjectMeta: meta(scoped, ""), Subjects: []rbacv1.Subject{sa},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: scoped}},
	)
	if o.AllNamespaces {
		objs = append(objs, &rbacv1.ClusterRoleBinding{ObjectMeta: meta(scoped+":all-namespaces", ""), Subjects: []rbacv1.Subject{sa},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.Name}})
	}
	for _, watched := range o.Namespaces {
		objs = append(objs, &rbacv1.RoleBinding{ObjectMeta: meta(scoped, watched), Subjects: []rbacv1.Subject{sa},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.Name}})
	}
	election := o.Name + "-leader-election"
	objs = append(objs,
		&rbacv1.Role{ObjectMeta: meta(election, o.Namespace), Rules: LeaderElectionRules()},
		&rbacv1.RoleBinding{ObjectMeta: meta(election, o.Namespace), Subjects: []rbacv1.Subject{sa},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: election}},
		deployment(o, meta(o.Name, o.Namespace)),
		&corev1.Service{ObjectMeta: meta(o.Name+"-metrics", o.Namespace), Spec: corev1.ServiceSpec{
			Selector: selector(o),
			Ports:    []corev1.ServicePort{{Name: "metrics", Port: MetricsPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}},
		}},
	)
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		u, err := toUnstructured(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// selector picks the watch's pods.
func selector(o InstallOptions) map[string]string {
	return map[string]string{v1alpha1.LabelName: "kubectl-onto", "app.kubernetes.io/component": "watch", v1alpha1.LabelInstance: o.Name}
}

// WatchArgs are the arguments of kubectl-onto in the watch's container.
func WatchArgs(o InstallOptions) []string {
	args := []string{"watch", "--leader-elect", "--leader-election-namespace=" + o.Namespace,
		"--metrics-bind-address=:" + strconv.Itoa(MetricsPort), "--health-probe-bind-address=:" + strconv.Itoa(HealthPort)}
	if o.AllNamespaces {
		return append(args, "--all-namespaces")
	}
	return append(args, "--namespaces="+strings.Join(o.Namespaces, ","))
}

// TempDir is the one place the watch's container can write: an emptyDir under its
// read-only root filesystem, also its HOME (the image's home is read-only there).
// The watch itself writes nothing to disk by default; what may (--audit-log FILE,
// ONTO_CPUPROFILE, os.TempDir, kubectl's cache under $HOME/.kube) lands here.
const TempDir = "/tmp"

// watchMemory is the watch container's memory request and limit when it watches
// namespaces namespaces (0: every namespace, one cache for the cluster). Watching
// listed namespaces costs one informer per namespace and kind (14 kinds), about 2-3
// MiB a namespace (docs/benchmarks.md). Without this a long --namespaces list
// would be OOM-killed at a fixed limit.
func watchMemory(namespaces int) (request, limit resource.Quantity) {
	const mi = 1 << 20
	request = *resource.NewQuantity(int64(128+3*namespaces)*mi, resource.BinarySI)
	limit = *resource.NewQuantity(int64(512+4*namespaces)*mi, resource.BinarySI)
	return request, limit
}

// deployment runs the watch: Replicas pods, one the leader, spread over nodes, each
// passing PodSecurity restricted with a read-only root filesystem.
func deployment(o InstallOptions, meta metav1.ObjectMeta) *appsv1.Deployment {
	sel := selector(o)
	podLabels := merge(meta.Labels, sel)
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("health")}},
			PeriodSeconds:    period,
			TimeoutSeconds:   5,
			FailureThreshold: 3,
		}
	}
	liveness := probe("/healthz", 20)
	liveness.InitialDelaySeconds = 15
	memoryRequest, memoryLimit := watchMemory(len(o.Namespaces))
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(o.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "watch"}},
				Spec: corev1.PodSpec{
					ServiceAccountName:           o.Name,
					AutomountServiceAccountToken: ptr.To(true),
					NodeSelector:                 map[string]string{corev1.LabelOSStable: "linux"},
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(int64(65532)),
						RunAsGroup:     ptr.To(int64(65532)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					// One replica per node where the nodes allow it: a node's loss
					// leaves a standby to take the lease. ScheduleAnyway, so a
					// one-node cluster still runs them all.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: sel},
					}},
					// Within the container's ephemeral-storage limit.
					Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{
						EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))},
					}}},
					Containers: []corev1.Container{{
						Name:            "watch",
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            WatchArgs(o),
						Env:             []corev1.EnvVar{{Name: "HOME", Value: TempDir}},
						VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: TempDir}},
						Ports: []corev1.ContainerPort{
							{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
							{Name: "health", ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP},
						},
						LivenessProbe:  liveness,
						ReadinessProbe: probe("/readyz", 10),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:              resource.MustParse("100m"),
								corev1.ResourceMemory:           memoryRequest,
								corev1.ResourceEphemeralStorage: resource.MustParse("64Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:              resource.MustParse("1"),
								corev1.ResourceMemory:           memoryLimit,
								corev1.ResourceEphemeralStorage: resource.MustParse("256Mi"),
							},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
						},
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
				},
			},
		},
	}
}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// toUnstructured converts a typed object, with its kind, leaving out what a typed
// object's zero values would add to a server-side apply (creationTimestamp: null,
// an empty status, strategy or spec).
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	gvk, err := installGVK(obj)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "strategy")
	unstructured.RemoveNestedField(u.Object, "status")
	if spec, ok := u.Object["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(u.Object, "spec") // a Namespace's
	}
	return u, nil
}

func installGVK(obj runtime.Object) (schema.GroupVersionKind, error) {
	switch obj.(type) {
	case *corev1.Namespace:
		return corev1.SchemeGroupVersion.WithKind("Namespace"), nil
	case *corev1.ServiceAccount:
		return corev1.SchemeGroupVersion.WithKind("ServiceAccount"), nil
	case *corev1.Service:
		return corev1.SchemeGroupVersion.WithKind("Service"), nil
	case *rbacv1.ClusterRole:
		return rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), nil
	case *rbacv1.ClusterRoleBinding:
		return rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), nil
	case *rbacv1.Role:
		return rbacv1.SchemeGroupVersion.WithKind("Role"), nil
	case *rbacv1.RoleBinding:
		return rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), nil
	case *appsv1.Deployment:
		return appsv1.SchemeGroupVersion.WithKind("Deployment"), nil
	case *admissionv1.ValidatingAdmissionPolicy:
		return admissionv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), nil
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		return admissionv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"), nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("no kind for %T", obj)
}

// ApplyInstall writes objs, in order, by server-side apply with the field manager
// kubectl-onto; applied hears each object as the API server stored it. Without force,
// a field another manager owns stops it, naming the fields.
func ApplyInstall(ctx context.Context, clients *kube.Clients, objs []*unstructured.Unstructured, force bool, applied func(*unstructured.Unstructured)) error {
	for _, obj := range objs {
		ri, err := clients.Resource(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", kube.Ref(obj), err)
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		live, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: plan.FieldManager, Force: &force})
		switch {
		case apierrors.IsConflict(err):
			return fmt.Errorf("apply %s: %w\nanother field manager owns some of these fields: re-run with --force-conflicts to take them over", kube.Ref(obj), err)
		case apierrors.IsNotFound(err) && obj.GetNamespace() != "":
			return fmt.Errorf("apply %s: %w (does namespace %s exist?)", kube.Ref(obj), err, obj.GetNamespace())
		case err != nil:
			return fmt.Errorf("apply %s: %w", kube.Ref(obj), err)
		}
		if applied != nil {
			applied(live)
		}
	}
	return nil
}
