/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/internal/controller"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// token is a REST config that authenticates as the installed watch's ServiceAccount
// with a token the API server issued for it (TokenRequest), and nothing else: no
// client certificate, no impersonation. It is checked with a SelfSubjectReview.
func (in *installed) token(t *testing.T) *rest.Config {
	t.Helper()
	ctx := t.Context()
	tr, err := in.c.Kube.CoreV1().ServiceAccounts(in.opts.Namespace).CreateToken(ctx, in.opts.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for the watch's ServiceAccount: %v", err)
	}
	cfg := rest.AnonymousClientConfig(in.c.Config)
	cfg.BearerToken = tr.Status.Token
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("who am I, with the token: %v", err)
	}
	if got, want := review.Status.UserInfo.Username, controller.ServiceAccountUser(in.opts.Name, in.opts.Namespace); got != want {
		t.Fatalf("the token authenticates as %q, want %q", got, want)
	}
	return cfg
}

// refusalLog records the requests the API server refused (403) through the
// transports it wraps.
type refusalLog struct{ requestLog }

func (l *refusalLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			l.mu.Lock()
			l.sent = append(l.sent, r.Method+" "+r.URL.Path)
			l.mu.Unlock()
		}
		return resp, err
	})
}

// policyName is the name of the installed watch's policy with suffix.
func (in *installed) policyName(suffix string) string {
	return controller.PolicyName(in.opts.Name, in.opts.Namespace, suffix)
}

// refusedBy reports whether err is the API server's refusal by the installed
// watch's policy with suffix.
func (in *installed) refusedBy(err error, suffix string) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+in.policyName(suffix)+"'")
}

// waitForPolicies waits until the API server enforces both policies on kc: a
// policy and its binding take effect some time after they are written.
func (in *installed) waitForPolicies(t *testing.T, kc kubernetes.Interface, platformNS string) {
	t.Helper()
	ctx := t.Context()
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var last error
	err := testcluster.Poll(ctx, 60*time.Second, func(ctx context.Context) (bool, error) {
		_, last = kc.CoreV1().ConfigMaps(metav1.NamespaceSystem).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "onto-probe"}}, dryRun)
		if !in.refusedBy(last, controller.PolicyPlatformNamespaces) {
			return false, nil
		}
		_, last = kc.CoreV1().Secrets(platformNS).Create(ctx, saTokenSecret("onto-probe", "default"), dryRun)
		return in.refusedBy(last, controller.PolicySafeWrites), nil
	})
	if err != nil {
		t.Fatalf("the watch's admission policies not enforced: %v (last answer: %v)", err, last)
	}
}

func saTokenSecret(name, serviceAccount string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: serviceAccount}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
}

// podDeployment is a Deployment of one pod whose spec edit makes it what is tried.
func podDeployment(name string, edit func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/x:1"}}}
	if edit != nil {
		edit(&spec)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// TestInstallPrivilegeAllNamespaces installs the watch with --all-namespaces (the
// objects `watch install -A` renders, applied as the admin), takes a token of its
// ServiceAccount, and through the API server with that token alone:
//
//   - tries each escalation its rights could otherwise open (and a few more), each refused, by RBAC
//     or by the install's admission policies, whose refusal is checked by name;
//   - does what the watch needs in a platform's namespace: a server-side apply of the
//     rendered platform (pkg/apply, as the CLI does), a dry-run of the CRD, then the
//     watch itself: finalizer, drift repair of a deleted Deployment and of a
//     PodSecurity label removed from the platform's Namespace, and the finalizer's
//     ordered uninstall when the platform is deleted.
func TestInstallPrivilegeAllNamespaces(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	admin, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", c.Namespace(t))
	ontotest.Small(&p.Spec)
	ontotest.Install(t, admin, p)
	in := installWatchWith(t, c, controller.InstallOptions{AllNamespaces: true})
	cfg := in.token(t)
	sa, err := kube.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ns := t.Context(), p.Namespace
	in.waitForPolicies(t, sa.Kube, ns)
	other := c.Namespace(t) // a namespace without an OntoPlatform
	suffix := strings.ToLower(rand.Text()[:6])
	created := func(what string, del func(context.Context) error) {
		// Something the watch must not do was done: undo it.
		t.Errorf("%s: allowed, want refused", what)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = del(ctx)
		})
	}

	t.Run("refused", func(t *testing.T) {
		const (
			gate = controller.PolicyPlatformNamespaces
			safe = controller.PolicySafeWrites
			rbac = "" // refused by RBAC: Forbidden, and no policy in the message
			// Breaks both policies: the API server names the first that refused,
			// in no fixed order.
			either = "either"
		)
		create := metav1.CreateOptions{}
		deployment := func(namespace string, d *appsv1.Deployment) error {
			d.Name += "-" + suffix
			_, err := sa.Kube.AppsV1().Deployments(namespace).Create(ctx, d, create)
			if err == nil {
				created("Deployment "+namespace+"/"+d.Name, func(ctx context.Context) error {
					return c.Kube.AppsV1().Deployments(namespace).Delete(ctx, d.Name, metav1.DeleteOptions{})
				})
			}
			return err
		}
		nsPatch := func(namespace, patch string) error {
			_, err := sa.Kube.CoreV1().Namespaces().Patch(ctx, namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		}
		crd, err := plan.CRD()
		if err != nil {
			t.Fatal(err)
		}
		tries := []struct {
			what string
			by   string
			try  func() error
		}{
			{"create a Deployment in kube-system", gate, func() error {
				return deployment(metav1.NamespaceSystem, podDeployment("onto-escalate", nil))
			}},
			{"create a Deployment in a namespace without an OntoPlatform", gate, func() error {
				return deployment(other, podDeployment("onto-escalate", nil))
			}},
			{"create a Lease in kube-system (leader election of the control plane)", gate, func() error {
				l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "onto-escalate-" + suffix}}
				_, err := sa.Kube.CoordinationV1().Leases(metav1.NamespaceSystem).Create(ctx, l, create)
				if err == nil {
					created("Lease kube-system/"+l.Name, func(ctx context.Context) error {
						return c.Kube.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, l.Name, metav1.DeleteOptions{})
					})
				}
				return err
			}},
			{"create a service-account-token Secret in kube-system for clusterrole-aggregation-controller", either, func() error {
				s := saTokenSecret("onto-escalate-"+suffix, "clusterrole-aggregation-controller")
				_, err := sa.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, create)
				if err == nil {
					created("Secret kube-system/"+s.Name, func(ctx context.Context) error {
						return c.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, s.Name, metav1.DeleteOptions{})
					})
				}
				return err
			}},
			{"create a service-account-token Secret in the platform's namespace for its default ServiceAccount", safe, func() error {
				s := saTokenSecret("onto-escalate-"+suffix, "default")
				_, err := sa.Kube.CoreV1().Secrets(ns).Create(ctx, s, create)
				if err == nil {
					created("Secret "+ns+"/"+s.Name, func(ctx context.Context) error {
						return c.Kube.CoreV1().Secrets(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
					})
				}
				return err
			}},
			{"relax PodSecurity of a Namespace without an OntoPlatform", either, func() error {
				return nsPatch(other, `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`)
			}},
			{"label a Namespace without an OntoPlatform", gate, func() error {
				return nsPatch(other, `{"metadata":{"labels":{"onto.paas/x":"y"}}}`)
			}},
			{"label kube-system", gate, func() error {
				return nsPatch(metav1.NamespaceSystem, `{"metadata":{"labels":{"onto.paas/x":"y"}}}`)
			}},
			{"relax the platform Namespace's PodSecurity to privileged", safe, func() error {
				return nsPatch(ns, `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`)
			}},
			{"remove the platform Namespace's PodSecurity enforce label", safe, func() error {
				return nsPatch(ns, `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":null}}}`)
			}},
			{"pin the platform Namespace's PodSecurity to an old version", safe, func() error {
				return nsPatch(ns, `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce-version":"v1.20"}}}`)
			}},
			{"set a label of another tool on the platform's Namespace", safe, func() error {
				return nsPatch(ns, `{"metadata":{"labels":{"istio-injection":"enabled"}}}`)
			}},
			{"set a node-selector annotation on the platform's Namespace", safe, func() error {
				return nsPatch(ns, `{"metadata":{"annotations":{"scheduler.alpha.kubernetes.io/node-selector":"x=y"}}}`)
			}},
			{"delete the platform's Namespace", rbac, func() error {
				return sa.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			}},
			{"a privileged Deployment in the platform's namespace", safe, func() error {
				return deployment(ns, podDeployment("onto-privileged", func(s *corev1.PodSpec) {
					s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
				}))
			}},
			{"a hostNetwork Deployment in the platform's namespace", safe, func() error {
				return deployment(ns, podDeployment("onto-hostnetwork", func(s *corev1.PodSpec) { s.HostNetwork = true }))
			}},
			{"a hostPID StatefulSet in the platform's namespace", safe, func() error {
				d := podDeployment("onto-hostpid-"+suffix, func(s *corev1.PodSpec) { s.HostPID = true })
				sts := &appsv1.StatefulSet{ObjectMeta: d.ObjectMeta, Spec: appsv1.StatefulSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}
				_, err := sa.Kube.AppsV1().StatefulSets(ns).Create(ctx, sts, create)
				if err == nil {
					created("StatefulSet "+ns+"/"+sts.Name, func(ctx context.Context) error {
						return c.Kube.AppsV1().StatefulSets(ns).Delete(ctx, sts.Name, metav1.DeleteOptions{})
					})
				}
				return err
			}},
			{"a hostPath Job in the platform's namespace", safe, func() error {
				d := podDeployment("onto-hostpath-"+suffix, func(s *corev1.PodSpec) {
					s.RestartPolicy = corev1.RestartPolicyNever
					s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
				})
				d.Spec.Template.Labels = nil
				job := &batchv1.Job{ObjectMeta: d.ObjectMeta, Spec: batchv1.JobSpec{Template: d.Spec.Template}}
				_, err := sa.Kube.BatchV1().Jobs(ns).Create(ctx, job, create)
				if err == nil {
					created("Job "+ns+"/"+job.Name, func(ctx context.Context) error {
						return c.Kube.BatchV1().Jobs(ns).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
					})
				}
				return err
			}},
			{"an init container adding NET_ADMIN in the platform's namespace", safe, func() error {
				return deployment(ns, podDeployment("onto-netadmin", func(s *corev1.PodSpec) {
					s.InitContainers = []corev1.Container{{Name: "i", Image: "registry.example/x:1",
						SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}}}
				}))
			}},
			{"a host port in the platform's namespace", safe, func() error {
				return deployment(ns, podDeployment("onto-hostport", func(s *corev1.PodSpec) {
					s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
				}))
			}},
			{"make the platform's gateway Deployment privileged (server-side apply)", safe, func() error {
				patch := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"gateway"},"spec":{"template":{"spec":{"containers":[{"name":"gateway","securityContext":{"privileged":true,"allowPrivilegeEscalation":true}}]}}}}`
				_, err := sa.Kube.AppsV1().Deployments(ns).Patch(ctx, "gateway", types.ApplyPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "escalation", Force: ptr.To(true)})
				return err
			}},
			{"a Service with externalIPs in the platform's namespace", safe, func() error {
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "onto-externalip-" + suffix}, Spec: corev1.ServiceSpec{
					Ports: []corev1.ServicePort{{Port: 80}}, ExternalIPs: []string{"10.0.0.1"}}}
				_, err := sa.Kube.CoreV1().Services(ns).Create(ctx, svc, create)
				if err == nil {
					created("Service "+ns+"/"+svc.Name, func(ctx context.Context) error {
						return c.Kube.CoreV1().Services(ns).Delete(ctx, svc.Name, metav1.DeleteOptions{})
					})
				}
				return err
			}},
			{"patch the OntoPlatform CRD (not a dry-run)", safe, func() error {
				_, err := sa.Dynamic.Resource(crdGVR()).Patch(ctx, crd.GetName(), types.MergePatchType,
					[]byte(`{"metadata":{"labels":{"onto.paas/escalation":"x"}}}`), metav1.PatchOptions{})
				return err
			}},
			{"patch another CRD", rbac, func() error {
				_, err := sa.Dynamic.Resource(crdGVR()).Patch(ctx, "stages.kwok.x-k8s.io", types.MergePatchType,
					[]byte(`{"metadata":{"labels":{"onto.paas/escalation":"x"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}},
			{"bind cluster-admin to itself", rbac, func() error {
				crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "onto-escalate-" + suffix},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: in.opts.Name, Namespace: in.opts.Namespace}},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}
				_, err := sa.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}},
			{"a RoleBinding to admin in the platform's namespace", rbac, func() error {
				rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "onto-escalate-" + suffix},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: in.opts.Name, Namespace: in.opts.Namespace}},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}}
				_, err := sa.Kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}},
			{"escalate its own ClusterRole to */*/*", rbac, func() error {
				patch := `{"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`
				_, err := sa.Kube.RbacV1().ClusterRoles().Patch(ctx, in.opts.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}},
			{"a token for kube-system/clusterrole-aggregation-controller (TokenRequest)", rbac, func() error {
				_, err := sa.Kube.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, "clusterrole-aggregation-controller",
					&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
				return err
			}},
			{"impersonate system:admin", rbac, func() error {
				imp := rest.CopyConfig(cfg)
				imp.Impersonate = rest.ImpersonationConfig{UserName: "system:admin", Groups: []string{"system:masters"}}
				kc, err := kubernetes.NewForConfig(imp)
				if err != nil {
					return err
				}
				_, err = kc.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
				return err
			}},
			{"create a pod in the platform's namespace", rbac, func() error {
				_, err := sa.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "onto-escalate-" + suffix},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}},
		}
		for _, tc := range tries {
			err := tc.try()
			switch {
			case tc.by == rbac && (!apierrors.IsForbidden(err) || strings.Contains(fmt.Sprint(err), "ValidatingAdmissionPolicy")):
				t.Errorf("%s: %v, want Forbidden by RBAC", tc.what, err)
			case tc.by == either && !in.refusedBy(err, gate) && !in.refusedBy(err, safe):
				t.Errorf("%s: %v, want Forbidden by the watch's policies", tc.what, err)
			case tc.by != rbac && tc.by != either && !in.refusedBy(err, tc.by):
				t.Errorf("%s: %v, want Forbidden by policy %s", tc.what, err, in.policyName(tc.by))
			default:
				t.Logf("refused: %s: %v", tc.what, err)
			}
		}
	})

	t.Run("reads are not narrowed under -A", func(t *testing.T) {
		// Documented in docs/watch.md's threat model: the watch's cache lists Secrets by
		// label in every namespace, which RBAC cannot narrow. The same list under
		// --namespaces is refused (TestInstallRBACIsEnough).
		if _, err := sa.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list kube-system's Secrets under -A: %v (docs/watch.md says it is allowed: update it)", err)
		}
	})

	t.Run("works", func(t *testing.T) {
		// Every request refused to the watch's identity from here on is a failure.
		refusals := &refusalLog{}
		cfg := rest.CopyConfig(cfg)
		cfg.Wrap(refusals.wrap)
		sa, err := kube.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, r := range refusals.all() {
				t.Errorf("refused to the watch's identity: %s", r)
			}
		})

		// A server-side apply of the rendered platform, as `kubectl onto apply` does.
		opts := ontotest.ApplyOptions()
		opts.Release = ontotest.Release(t, p.Spec.Version)
		opts.Holder = "watch-privilege-test"
		if _, err := (&apply.Applier{Clients: sa, Now: time.Now}).Apply(ctx, ontotest.Desired(t, p), opts); err != nil {
			t.Fatalf("server-side apply of the platform as the watch's ServiceAccount: %v", err)
		}
		// What an upgrade's plan does with the CRD.
		crd, err := plan.CRD()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sa.Dynamic.Resource(crdGVR()).Patch(ctx, crd.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"onto.paas/dry-run":"x"}}}`),
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry-run of the CRD as the watch's ServiceAccount: %v", err)
		}

		// The watch, as the ServiceAccount: its cache and writes are those of -A,
		// its reconciles limited to this test's namespace, not other tests' platforms.
		audit := &syncBuffer{}
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		mgr, err := controller.NewManager(cfg, sa, controller.Options{
			Namespaces: []string{ns}, Drift: controller.DriftRepair, Audit: controller.NewAuditLog(audit),
			LeaderElect: true, LeaderElectionNamespace: in.opts.Namespace, HealthyRequeue: 2 * time.Second,
			Holder: "watch-privilege-test", LockTTL: 15 * time.Second, Log: log, Catalog: ontotest.Catalog(t), MaxConcurrentReconciles: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
		e := &watchEnv{t: t, c: c, clients: admin, p: p, audit: audit}
		e.eventually("finalizer added", 60*time.Second, func() (bool, error) {
			return contains(e.live().Finalizers, apply.Finalizer), nil
		})

		old, err := e.deployment("gateway")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Kube.AppsV1().Deployments(ns).Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("gateway recreated", 60*time.Second, func() (bool, error) {
			d, err := e.deployment("gateway")
			return err == nil && d.UID != old.UID, err
		})

		// PodSecurity made stricter again is what the policy lets through.
		const enforce = "pod-security.kubernetes.io/enforce"
		live, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if live.Labels[enforce] != "restricted" {
			t.Fatalf("the platform's namespace %s enforces %q, want restricted", ns, live.Labels[enforce])
		}
		if _, err := c.Kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"`+enforce+`":null}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("PodSecurity enforce label repaired", 60*time.Second, func() (bool, error) {
			live, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err == nil && live.Labels[enforce] == "restricted", err
		})

		ri, err := admin.Resource(platformObject(p))
		if err != nil {
			t.Fatal(err)
		}
		if err := ri.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("platform uninstalled and gone", 120*time.Second, func() (bool, error) {
			_, err := ri.Get(ctx, p.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if _, err := e.deployment("gateway"); !apierrors.IsNotFound(err) {
			t.Fatalf("gateway Deployment after the platform's deletion: %v", err)
		}
		// The end of the uninstall, as the watch: the kept namespace left the
		// inventory (the last write there is refused no more to the watch than the
		// OntoPlatform's finalizer and its lock's Lease after it).
		e.eventually("namespace released from the inventory", 30*time.Second, func() (bool, error) {
			live, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			_, labelled := live.GetLabels()[inventory.PartOfLabel]
			return err == nil && !labelled, err
		})
		if _, err := c.Kube.CoordinationV1().Leases(ns).Get(ctx, apply.LockName(p.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the platform's lock Lease after the uninstall: %v, want gone", err)
		}
	})
}
