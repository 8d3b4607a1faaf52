/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

type docEnv struct {
	t       *testing.T
	c       *testcluster.Cluster
	clients *kube.Clients
	p       *v1alpha1.OntoPlatform
}

func install(t *testing.T, edit ...func(*v1alpha1.OntoPlatformSpec)) *docEnv {
	t.Helper()
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", c.Namespace(t))
	for _, f := range edit {
		f(&p.Spec)
	}
	ontotest.Install(t, clients, p)
	return &docEnv{t: t, c: c, clients: clients, p: p}
}

// diagnose gathers and runs every check, as `doctor NAME -n NS` does.
func (e *docEnv) diagnose() *doctor.Report {
	e.t.Helper()
	g := &doctor.Gatherer{Clients: e.clients, Settings: doctor.DefaultSettings()}
	// kwok's never-ready pods would take the 2-minute default to show.
	g.ReadyGrace = 5 * time.Second
	ctx, cancel := context.WithTimeout(e.t.Context(), 30*time.Second)
	defer cancel()
	env, err := g.Gather(ctx, e.p.Namespace, e.p.Name)
	if err != nil {
		e.t.Fatalf("gather: %v", err)
	}
	return doctor.Evaluate(env, doctor.All(), false)
}

// waitFinding diagnoses until a finding of code about object (a prefix: "pod/nessie-")
// appears, and returns it.
func (e *docEnv) waitFinding(code, object string, timeout time.Duration) (doctor.Finding, *doctor.Report) {
	e.t.Helper()
	var (
		found doctor.Finding
		r     *doctor.Report
	)
	// A diagnosis reads the whole platform: once a second is often enough.
	if err := testcluster.EventuallyEvery(e.t.Context(), time.Second, timeout, func(context.Context) (bool, error) {
		r = e.diagnose()
		for _, f := range r.Findings() {
			if f.Code == code && strings.HasPrefix(f.Object, object) {
				found = f
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		e.t.Fatalf("no %s finding about %s: %v; findings:\n%s", code, object, err, describe(r))
	}
	return found, r
}

func describe(r *doctor.Report) string {
	var b strings.Builder
	for _, f := range r.Findings() {
		fmt.Fprintf(&b, "  %s %s %s: %s (fix: %s)\n", f.Severity, f.Code, f.Object, f.Evidence, f.Fix)
	}
	return b.String()
}

func errorsOf(r *doctor.Report) []doctor.Finding {
	var out []doctor.Finding
	for _, f := range r.Findings() {
		if f.Severity == doctor.SeverityError {
			out = append(out, f)
		}
	}
	return out
}

func resultOf(r *doctor.Report, code string) doctor.Result {
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			if ch.Code == code {
				return ch.Result
			}
		}
	}
	return ""
}

// podOf returns the name of a running pod of component.
func (e *docEnv) podOf(component string) string {
	e.t.Helper()
	pods, err := e.clients.Kube.CoreV1().Pods(e.p.Namespace).List(e.t.Context(), metav1.ListOptions{LabelSelector: v1alpha1.LabelName + "=" + component})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p.Name
		}
	}
	e.t.Fatalf("no running pod of %s", component)
	return ""
}

// TestDoctorFindsWhatBreaks: a healthy install has no error finding; then each failure
// is made for real on it, one after the other, and found with its code and object.
func TestDoctorFindsWhatBreaks(t *testing.T) {
	t.Parallel()
	e := install(t, ontotest.Small, func(s *v1alpha1.OntoPlatformSpec) {
		s.Gateway.Ingress = &v1alpha1.IngressSpec{Enabled: true, Host: "onto.example.com", TLS: true}
	})
	// The Ingress's certificate, as a user (or cert-manager) provides it.
	tlsSecret := e.ingressTLSSecret()
	if _, err := e.clients.Kube.CoreV1().Secrets(e.p.Namespace).Create(t.Context(),
		tlsSecretFor(t, e.p.Namespace, tlsSecret, "onto.example.com", time.Now().Add(90*24*time.Hour)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.diagnose()
	if errs := errorsOf(r); len(errs) > 0 || !r.Success {
		t.Fatalf("a healthy install has error findings:\n%s", describe(r))
	}
	if got := resultOf(r, doctor.CodeDrift); got != doctor.ResultPass {
		t.Fatalf("drift check %s on a fresh install, want pass (it plans the latest revision snapshot):\n%s", got, describe(r))
	}
	ctx := t.Context()
	ns := e.p.Namespace

	t.Run("crashloop", func(t *testing.T) {
		pod := e.podOf("data-service")
		if err := e.c.SetPodChaos(ctx, ns, pod, testcluster.ChaosCrashLoop); err != nil {
			t.Fatal(err)
		}
		f, _ := e.waitFinding(doctor.CodeCrashLoop, "pod/"+pod, 60*time.Second)
		if !strings.Contains(f.Evidence, "exit code") || !strings.Contains(f.Fix, "--previous") {
			t.Errorf("crash loop finding: %+v", f)
		}
	})
	t.Run("oomkilled", func(t *testing.T) {
		pod := e.podOf("nessie")
		if err := e.c.SetPodChaos(ctx, ns, pod, testcluster.ChaosOOMKilled); err != nil {
			t.Fatal(err)
		}
		f, _ := e.waitFinding(doctor.CodeOOMKilled, "pod/"+pod, 60*time.Second)
		if !strings.Contains(f.Fix, "spec.dataPlane.nessie.resources.limits.memory") {
			t.Errorf("OOM fix does not name the field: %+v", f)
		}
	})
	t.Run("evicted", func(t *testing.T) {
		pod := e.podOf("ontology-service")
		if err := e.c.SetPodChaos(ctx, ns, pod, testcluster.ChaosEvicted); err != nil {
			t.Fatal(err)
		}
		e.waitFinding(doctor.CodeEvicted, "pod/"+pod, 60*time.Second)
	})
	t.Run("drift and image pull", func(t *testing.T) {
		// Another tool takes the gateway's image over, to one that cannot be pulled.
		image := "registry.invalid/onto/gateway:broken"
		e.c.ChaosImage(t, ns, image, testcluster.ChaosImagePull)
		patch := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "gateway", "namespace": ns},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "gateway", "image": image}},
			}}},
		}}
		_, err := e.clients.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns).
			Apply(ctx, "gateway", patch, metav1.ApplyOptions{FieldManager: "other-tool", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := e.waitFinding(doctor.CodeDrift, "deployment/gateway", 30*time.Second)
		if !strings.Contains(f.Evidence, "other-tool") || !strings.Contains(f.Evidence, "image") {
			t.Errorf("drift finding does not name the field and its manager: %+v", f)
		}
		f, _ = e.waitFinding(doctor.CodeImagePull, "pod/gateway-", 60*time.Second)
		if !strings.Contains(f.Evidence, image) {
			t.Errorf("image pull finding does not name the image: %+v", f)
		}
	})
	t.Run("lease held by another run", func(t *testing.T) {
		acquired := metav1.NewMicroTime(time.Now().Add(-20 * time.Minute))
		renewed := metav1.NewMicroTime(time.Now())
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: apply.LockName(e.p.Name), Namespace: ns},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ci-runner-7/4242"), LeaseDurationSeconds: ptr.To(int32(300)),
				AcquireTime: &acquired, RenewTime: &renewed},
		}
		if _, err := e.clients.Kube.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		f, _ := e.waitFinding(doctor.CodeStuckWork, "lease/", 10*time.Second)
		if f.Severity != doctor.SeverityWarning || !strings.Contains(f.Evidence, "ci-runner-7/4242") || !strings.Contains(f.Fix, "unlock") {
			t.Errorf("lease finding: %+v", f)
		}
	})
	t.Run("autoscaler without its metrics", func(t *testing.T) {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "nessie-rps", Namespace: ns, Labels: map[string]string{v1alpha1.LabelInstance: e.p.Name}},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nessie"},
				MinReplicas:    ptr.To(int32(1)), MaxReplicas: 3,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))},
				}}},
			},
		}
		if _, err := e.clients.Kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitFinding(doctor.CodeHPAInactive, "horizontalpodautoscaler/nessie-rps", 60*time.Second)
	})
	t.Run("expired certificate", func(t *testing.T) {
		secret := tlsSecretFor(t, ns, tlsSecret, "onto.example.com", time.Now().Add(-24*time.Hour))
		if _, err := e.clients.Kube.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		f, r := e.waitFinding(doctor.CodeTLSExpiry, "secret/"+tlsSecret, 10*time.Second)
		if f.Severity != doctor.SeverityError || !strings.Contains(f.Evidence, "expired") {
			t.Errorf("certificate finding: %+v", f)
		}
		// No format carries a Secret's value: neither the certificate nor the
		// platform's generated credentials.
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for name, value := range e.secretValues() {
			if len(value) >= 8 && strings.Contains(string(out), value) {
				t.Errorf("the report holds a value of Secret %s", name)
			}
		}
		if strings.Contains(string(out), "BEGIN") {
			t.Errorf("the report holds PEM data")
		}
	})
	if t.Failed() {
		return
	}
	r = e.diagnose()
	if r.Success {
		t.Fatalf("doctor succeeds on a broken platform:\n%s", describe(r))
	}
}

// ingressTLSSecret is the TLS Secret name of the platform's Ingress.
func (e *docEnv) ingressTLSSecret() string {
	e.t.Helper()
	list, err := e.clients.Kube.NetworkingV1().Ingresses(e.p.Namespace).List(e.t.Context(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ing := range list.Items {
		for _, tls := range ing.Spec.TLS {
			if tls.SecretName != "" {
				return tls.SecretName
			}
		}
	}
	e.t.Fatalf("the platform renders no Ingress with TLS")
	return ""
}

// secretValues are the values of every Secret of the namespace, by name/key.
func (e *docEnv) secretValues() map[string]string {
	e.t.Helper()
	list, err := e.clients.Kube.CoreV1().Secrets(e.p.Namespace).List(e.t.Context(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		for k, v := range s.Data {
			out[s.Name+"/"+k] = string(v)
		}
	}
	return out
}

// tlsSecretFor is a kubernetes.io/tls Secret with a self-signed certificate for host,
// valid until notAfter (and from two days before it or now, whichever is first).
func tlsSecretFor(t *testing.T, ns, name, host string, notAfter time.Time) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	notBefore := notAfter
	if time.Now().Before(notBefore) {
		notBefore = time.Now()
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: notBefore.Add(-48 * time.Hour), NotAfter: notAfter,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
}

// TestDoctorNodesAndPending: a platform pinned to its own tainted node, whose node
// then goes NotReady, and a component that asks for more GPUs than any node has.
func TestDoctorNodesAndPending(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	pool := testcluster.UniqueName(t, "pool")
	node := c.NewNode(t, map[string]string{"onto.dev/pool": pool},
		[]corev1.Taint{{Key: "onto.dev/pool", Value: pool, Effect: corev1.TaintEffectNoSchedule}})
	e := install(t, ontotest.Small, func(s *v1alpha1.OntoPlatformSpec) {
		s.Global.NodeSelector = map[string]string{"onto.dev/pool": pool}
		s.Global.Tolerations = []corev1.Toleration{{Key: "onto.dev/pool", Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}}
	})
	ctx := t.Context()
	if err := c.SetNodeNotReady(ctx, node.Name, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.SetNodeNotReady(context.Background(), node.Name, false) })
	f, _ := e.waitFinding(doctor.CodeNodeNotReady, "node/"+node.Name, 60*time.Second)
	if !strings.Contains(f.Evidence, "Ready=") || !strings.Contains(f.Evidence, "platform pods") {
		t.Errorf("node finding: %+v", f)
	}
	// What apply and status say of a workload whose pods stopped being ready there
	// (kwok keeps them Ready; a kubelet gone quiet leaves them NotReady after the
	// node's grace): the node and its condition come first.
	pods, err := c.Kube.CoreV1().Pods(e.p.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("platform pods: %v, %d", err, len(pods.Items))
	}
	for i := range pods.Items {
		pods.Items[i].Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	}
	if why := health.NodeProblems(ctx, c.Kube, pods.Items); !strings.Contains(why, "node "+node.Name+" NotReady: Ready=False (nodeFailed") {
		t.Errorf("NodeProblems = %q, want node %s named with its Ready condition", why, node.Name)
	}
	// A pod of the pool the scheduler cannot place (the node is tainted not-ready):
	// the node its nodeSelector picks is named, once, though two pods wait for it.
	pending := []corev1.Pod{pods.Items[0], pods.Items[0]}
	for i := range pending {
		pending[i].Spec.NodeName = ""
		pending[i].Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	}
	if why := health.NodeProblems(ctx, c.Kube, pending); strings.Count(why, "node "+node.Name+" NotReady: Ready=False (nodeFailed") != 1 {
		t.Errorf("NodeProblems of unschedulable pods = %q, want node %s named once with its Ready condition", why, node.Name)
	}

	// The reasoning service asks 16 GPUs; the largest node has 4. Written without
	// waiting, as apply --wait=false would.
	p := e.p.DeepCopy()
	p.Spec.IntelligencePlane.ReasoningService.Enabled = ptr.To(true)
	p.Spec.IntelligencePlane.ReasoningService.GPU = &v1alpha1.GPUSpec{Enabled: true, Count: 16}
	p.Spec.Global.NodeSelector, p.Spec.Global.Tolerations = nil, nil
	opts := ontotest.ApplyOptions()
	opts.Release, opts.Wait = ontotest.Release(t, p.Spec.Version), false
	if _, err := (&apply.Applier{Clients: e.clients, Now: time.Now}).Apply(ctx, ontotest.Desired(t, p), opts); err != nil {
		t.Fatalf("apply: %v", err)
	}
	f, _ = e.waitFinding(doctor.CodePending, "pod/reasoning-service-", 60*time.Second)
	if !strings.Contains(f.Evidence, "nvidia.com/gpu") || !strings.Contains(f.Fix, "resources.requests") {
		t.Errorf("pending finding: %+v", f)
	}
}

// TestDoctorPreAdmission: --pre in an existing namespace that enforces PodSecurity
// restricted finds the workload whose pods it would refuse (PodSecurity enforces on
// Pods, so a dry-run of the Deployment alone would pass).
func TestDoctorPreAdmission(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	nsObj, err := clients.Kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := clients.Kube.CoreV1().Namespaces().Update(t.Context(), nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", ns)
	ontotest.Small(&p.Spec)
	privileged := render.Patch{Patch: `[{"op": "replace", "path": "/spec/template/spec/containers/0/securityContext/allowPrivilegeEscalation", "value": true}]`,
		Target: &render.PatchTarget{Kind: "Deployment", Name: "gateway"}}
	g := &doctor.Gatherer{Clients: clients, Settings: doctor.DefaultSettings(), Pre: true,
		File: &platform.Loaded{Platform: p, Release: *ontotest.Release(t, p.Spec.Version), Patches: []render.Patch{privileged}}, FileSource: "platform.yaml"}
	env, err := g.Gather(t.Context(), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Evaluate(env, doctor.Select(doctor.All(), true, nil, []string{"PRE-009"}), false)
	var found []string
	for _, f := range r.Findings() {
		found = append(found, f.Object+": "+f.Evidence)
	}
	if len(found) != 1 || !strings.HasPrefix(found[0], "deployment/gateway: ") || !strings.Contains(found[0], "PodSecurity") {
		t.Fatalf("PRE-009 findings %q; want only deployment/gateway, refused by PodSecurity", found)
	}
}

// TestDoctorPreWritesNothing: --pre of a file whose storage class does not exist fails
// naming it, before anything is installed, and sends no write.
func TestDoctorPreWritesNothing(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	counter := bench.NewCounter()
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(counter.Wrap)
	clients, err := kube.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", c.NewNamespaceName(t))
	p.Spec.Global.StorageClass = "no-such-class"
	g := &doctor.Gatherer{Clients: clients, Settings: doctor.DefaultSettings(), Pre: true,
		File: &platform.Loaded{Platform: p, Release: *ontotest.Release(t, p.Spec.Version)}, FileSource: "platform.yaml"}
	env, err := g.Gather(t.Context(), p.Namespace, "")
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Evaluate(env, doctor.Select(doctor.All(), true, nil, nil), false)
	counts := counter.Take()
	if counts.Writes() != 0 || counts[bench.VerbLock] != 0 {
		t.Fatalf("doctor --pre sent %s; want no write", counts)
	}
	if r.Success {
		t.Fatalf("--pre passes with storageClass no-such-class:\n%s", describe(r))
	}
	var found bool
	for _, f := range r.Findings() {
		if f.Code == "ONTO-PRE-004" && strings.Contains(f.Object+f.Evidence, "no-such-class") {
			found = true
		}
		if f.Severity == doctor.SeverityError && f.Code != "ONTO-PRE-004" {
			t.Errorf("unexpected error finding: %s %s: %s", f.Code, f.Object, f.Evidence)
		}
	}
	if !found {
		t.Fatalf("no ONTO-PRE-004 finding naming no-such-class:\n%s", describe(r))
	}
	for _, cat := range r.Categories {
		for _, ch := range cat.Checks {
			if !strings.HasPrefix(ch.Code, "ONTO-PRE-") && cat.Name != doctor.CategoryNodes {
				t.Errorf("--pre ran %s", ch.Code)
			}
		}
	}
}
