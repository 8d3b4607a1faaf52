/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// production loads the article's example, the richest input.
func production(t testing.TB) (*v1alpha1.OntoPlatform, release.Release) {
	return load(t, filepath.Join("testdata", "TestRender", "platform.yaml"))
}

func mustRender(t testing.TB, p *v1alpha1.OntoPlatform, rel release.Release, patches ...Patch) []*unstructured.Unstructured {
	t.Helper()
	planes, err := Render(p, Options{Release: rel, Patches: patches})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return Objects(planes)
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

func convert[T any](t testing.TB, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// podTemplates returns the pod template of every workload and Job, by "Kind/name".
func podTemplates(t testing.TB, objs []*unstructured.Unstructured) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	for _, u := range objs {
		switch u.GetKind() {
		case "Deployment":
			out["Deployment/"+u.GetName()] = convert[appsv1.Deployment](t, u).Spec.Template
		case "StatefulSet":
			out["StatefulSet/"+u.GetName()] = convert[appsv1.StatefulSet](t, u).Spec.Template
		case "Job":
			out["Job/"+u.GetName()] = convert[batchv1.Job](t, u).Spec.Template
		}
	}
	return out
}

// TestAutoscaledDeploymentsLeaveReplicasToTheHPA: an autoscaled Deployment renders
// the count it starts at, max(spec replicas or 1, minReplicas), marked create-only so
// the planner leaves the count to the HPA once the Deployment exists; others render the
// spec's count, unmarked.
func TestAutoscaledDeploymentsLeaveReplicasToTheHPA(t *testing.T) {
	p, rel := production(t)
	// Below the floor when unset: the example's ontology-service sets 3 (above its
	// floor 2); data-service sets 3 too, so one is unset here.
	p.Spec.DataPlane.DataService.Replicas = nil
	p.Spec.DataPlane.DataService.Autoscaling.MinReplicas = 4
	objs := mustRender(t, p, rel)
	want := map[string]int32{v1alpha1.ComponentOntologyService: 3, v1alpha1.ComponentDataService: 4}
	autoscaled := 0
	for _, c := range p.Spec.Components() {
		if c.Service == nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			d := convert[appsv1.Deployment](t, find(objs, "Deployment", c.Name))
			hpa := find(objs, "HorizontalPodAutoscaler", c.Name)
			createOnly := v1alpha1.CreateOnlyReplicas(d.Annotations)
			switch {
			case c.Autoscaled() && hpa == nil:
				t.Error("autoscaled component has no HPA")
			case c.Autoscaled() && !createOnly:
				t.Errorf("autoscaled Deployment lacks %s: %s; applies would reset the HPA's count", v1alpha1.AnnotationReplicas, v1alpha1.ReplicasCreateOnly)
			case c.Autoscaled() && (d.Spec.Replicas == nil || *d.Spec.Replicas != want[c.Name]):
				t.Errorf("autoscaled Deployment starts at %v replicas, want %d", d.Spec.Replicas, want[c.Name])
			case !c.Autoscaled() && (d.Spec.Replicas == nil || *d.Spec.Replicas != c.DesiredReplicas()):
				t.Errorf("replicas = %v, want %d", d.Spec.Replicas, c.DesiredReplicas())
			case !c.Autoscaled() && (hpa != nil || createOnly):
				t.Errorf("a component without autoscaling has an HPA (%v) or create-only replicas (%v)", hpa != nil, createOnly)
			}
		})
		if c.Autoscaled() {
			autoscaled++
		}
	}
	if autoscaled != len(want) {
		t.Fatalf("%d autoscaled components, want %d", autoscaled, len(want))
	}
}

func TestHPA(t *testing.T) {
	tests := []struct {
		name         string
		mutate       func(a *v1alpha1.AutoscalingSpec)
		up, down     int32
		wantMetrics  []string
		wantMin, max int32
	}{
		{name: "article defaults", up: 60, down: 300, wantMetrics: []string{"Resource/cpu=70"}, wantMin: 2, max: 10},
		{
			name: "windows and pods metric from the spec",
			mutate: func(a *v1alpha1.AutoscalingSpec) {
				a.ScaleUpStabilizationSeconds = ptr.To[int32](30)
				a.ScaleDownStabilizationSeconds = ptr.To[int32](600)
				a.PodsMetrics = []v1alpha1.PodsMetricSpec{{Name: "grpc_requests_per_second", AverageValue: resource.MustParse("1k")}}
			},
			up: 30, down: 600, wantMetrics: []string{"Resource/cpu=70", "Pods/grpc_requests_per_second=1k"}, wantMin: 2, max: 10,
		},
		{
			name: "windows unset fall back to 60/300",
			mutate: func(a *v1alpha1.AutoscalingSpec) {
				a.ScaleUpStabilizationSeconds, a.ScaleDownStabilizationSeconds = nil, nil
			},
			up: 60, down: 300, wantMetrics: []string{"Resource/cpu=70"}, wantMin: 2, max: 10,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			if tc.mutate != nil {
				tc.mutate(p.Spec.ControlPlane.OntologyService.Autoscaling)
			}
			u := find(mustRender(t, p, rel), "HorizontalPodAutoscaler", v1alpha1.ComponentOntologyService)
			if u == nil {
				t.Fatal("no HPA for ontology-service")
			}
			h := convert[autoscalingv2.HorizontalPodAutoscaler](t, u)
			if got := *h.Spec.Behavior.ScaleUp.StabilizationWindowSeconds; got != tc.up {
				t.Errorf("scaleUp window = %d, want %d", got, tc.up)
			}
			if got := *h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds; got != tc.down {
				t.Errorf("scaleDown window = %d, want %d", got, tc.down)
			}
			if *h.Spec.MinReplicas != tc.wantMin || h.Spec.MaxReplicas != tc.max {
				t.Errorf("min/max = %d/%d, want %d/%d", *h.Spec.MinReplicas, h.Spec.MaxReplicas, tc.wantMin, tc.max)
			}
			var metrics []string
			for _, m := range h.Spec.Metrics {
				switch m.Type {
				case autoscalingv2.ResourceMetricSourceType:
					metrics = append(metrics, "Resource/"+string(m.Resource.Name)+"="+itoa(*m.Resource.Target.AverageUtilization))
				case autoscalingv2.PodsMetricSourceType:
					if m.Pods.Target.Type != autoscalingv2.AverageValueMetricType {
						t.Errorf("pods metric target type %s, want AverageValue", m.Pods.Target.Type)
					}
					metrics = append(metrics, "Pods/"+m.Pods.Metric.Name+"="+m.Pods.Target.AverageValue.String())
				}
			}
			if diff := cmp.Diff(tc.wantMetrics, metrics); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			if ref := h.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != v1alpha1.ComponentOntologyService {
				t.Errorf("scaleTargetRef = %+v", ref)
			}
		})
	}
}

func itoa(n int32) string { return resource.NewQuantity(int64(n), resource.DecimalSI).String() }

func TestEveryObjectHasTheRecommendedLabels(t *testing.T) {
	for _, name := range exampleNames() {
		t.Run(name, func(t *testing.T) {
			p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
			for _, u := range mustRender(t, p, rel) {
				id := u.GetKind() + "/" + u.GetName()
				checkLabels(t, id, u.GetLabels(), p, p.Spec.Version)
				if u.GetKind() != "Namespace" && u.GetNamespace() != p.Namespace {
					t.Errorf("%s: namespace %q, want %q", id, u.GetNamespace(), p.Namespace)
				}
				if tpl, ok, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels"); ok {
					// Infrastructure pod templates carry their image's version instead
					// (TestVersionBumpKeepsInfrastructurePods).
					want := p.Spec.Version
					switch u.GetKind() {
					case "StatefulSet":
						want = imageTag(t, convert[appsv1.StatefulSet](t, u).Spec.Template.Spec.Containers[0].Image)
					case "Job": // MinIO's user setup, on MinIO's image
						want = imageTag(t, convert[batchv1.Job](t, u).Spec.Template.Spec.Containers[0].Image)
					}
					checkLabels(t, id+" pod template", tpl, p, want)
				}
				// The ServiceMonitor selects the Services of every component, not one.
				if sel, ok, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels"); ok && u.GetKind() != "ServiceMonitor" {
					want := map[string]string{LabelName: u.GetLabels()[LabelName], LabelInstance: p.Name}
					if diff := cmp.Diff(want, sel); diff != "" {
						t.Errorf("%s: selector must be the stable name+instance pair (-want +got):\n%s", id, diff)
					}
				}
			}
		})
	}
}

func checkLabels(t *testing.T, id string, labels map[string]string, p *v1alpha1.OntoPlatform, version string) {
	t.Helper()
	want := map[string]string{
		LabelInstance:  p.Name,
		LabelPartOf:    PartOf,
		LabelVersion:   version,
		LabelManagedBy: ManagedBy,
	}
	for k, v := range want {
		if labels[k] != v {
			t.Errorf("%s: label %s = %q, want %q", id, k, labels[k], v)
		}
	}
	if labels[LabelName] == "" {
		t.Errorf("%s: no %s label", id, LabelName)
	}
	if !isPlane(labels[LabelComponent]) {
		t.Errorf("%s: label %s = %q, want a plane", id, LabelComponent, labels[LabelComponent])
	}
}

func isPlane(s string) bool {
	for _, pl := range v1alpha1.Planes() {
		if string(pl) == s {
			return true
		}
	}
	return false
}

// TestPodsPassRestrictedPodSecurity checks the rules of the "restricted" Pod Security
// Standard, plus what this project adds (read-only root, resources on every container
// so a namespace ResourceQuota admits the pods).
// TestPodsPassRestrictedPodSecurity: every pod template passes the "restricted" Pod
// Security Standard, judged by the API server's own evaluator, and the hardening the
// spec asks for beyond it (read-only root filesystem, a fixed non-root user, requests,
// limits, probes).
func TestPodsPassRestrictedPodSecurity(t *testing.T) {
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The version the namespace pins, not "latest": what the namespace will enforce.
	pinned, err := psaapi.ParseVersion(PodSecurityVersion)
	if err != nil {
		t.Fatalf("PodSecurityVersion %q: %v", PodSecurityVersion, err)
	}
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: pinned}
	for name, in := range everyInput(t) {
		t.Run(name, func(t *testing.T) {
			tpls := podTemplates(t, mustRender(t, in.p, in.rel))
			if len(tpls) == 0 {
				t.Fatal("no workloads rendered")
			}
			for id, tpl := range tpls {
				res := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &tpl.ObjectMeta, &tpl.Spec))
				if !res.Allowed {
					t.Errorf("%s: violates PodSecurity restricted: %s", id, res.ForbiddenDetail())
				}
				// A Job's container runs to completion: nothing to probe.
				for _, problem := range hardeningProblems(tpl.Spec, !strings.HasPrefix(id, "Job/")) {
					t.Errorf("%s: %s", id, problem)
				}
			}
		})
	}
}

// hardeningProblems are the spec's requirements beyond the restricted standard;
// probes says long-running containers must have liveness and readiness probes.
func hardeningProblems(spec corev1.PodSpec, probes bool) []string {
	var out []string
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.FSGroup == nil {
		out = append(out, "pod has no fixed non-root runAsUser and fsGroup")
	}
	containers := append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...)
	for _, c := range containers {
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			out = append(out, c.Name+": root filesystem is writable")
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			out = append(out, c.Name+": no cpu and memory requests")
		}
		if c.Resources.Limits.Memory().IsZero() {
			out = append(out, c.Name+": no memory limit")
		}
		if probes && !isInit(c.Name, spec) && (c.LivenessProbe == nil || c.ReadinessProbe == nil) {
			out = append(out, c.Name+": missing liveness or readiness probe")
		}
	}
	return out
}

func isInit(name string, spec corev1.PodSpec) bool {
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

func TestGPUOnlyOnTheReasoningService(t *testing.T) {
	tests := []struct {
		name string
		gpu  *v1alpha1.GPUSpec
		want bool
	}{
		{name: "enabled", gpu: &v1alpha1.GPUSpec{Enabled: true, Count: 2, ResourceName: "nvidia.com/gpu"}, want: true},
		{name: "disabled", gpu: &v1alpha1.GPUSpec{Enabled: false, Count: 1, ResourceName: "nvidia.com/gpu"}},
		{name: "absent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			p.Spec.IntelligencePlane.ReasoningService.GPU = tc.gpu
			for id, tpl := range podTemplates(t, mustRender(t, p, rel)) {
				want := tc.want && id == "Deployment/"+v1alpha1.ComponentReasoningService
				limit, hasLimit := tpl.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]
				hasToleration := false
				for _, tol := range tpl.Spec.Tolerations {
					if tol.Key == "nvidia.com/gpu" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule {
						hasToleration = true
					}
				}
				hasSelector := tpl.Spec.NodeSelector["nvidia.com/gpu.present"] == "true"
				if hasLimit != want || hasToleration != want || hasSelector != want {
					t.Errorf("%s: gpu limit %v, toleration %v, node selector %v; want all %v", id, hasLimit, hasToleration, hasSelector, want)
				}
				if want && limit.Value() != int64(tc.gpu.Count) {
					t.Errorf("%s: gpu limit %s, want %d", id, limit.String(), tc.gpu.Count)
				}
			}
		})
	}
}

// TestConfigChangeRollsPods: the ConfigMap's name carries a hash of its content, and the
// pod template refers to that name, so a config change changes the template.
func TestConfigChangeRollsPods(t *testing.T) {
	configRef := func(level string) (string, string) {
		p, rel := production(t)
		p.Spec.Observability.Logging.Level = level
		objs := mustRender(t, p, rel)
		tpl := podTemplates(t, objs)["Deployment/"+v1alpha1.ComponentOntologyService]
		ref := tpl.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name
		cm := find(objs, "ConfigMap", ref)
		if cm == nil {
			t.Fatalf("Deployment refers to ConfigMap %s, which is not rendered", ref)
		}
		got, _, _ := unstructured.NestedString(cm.Object, "data", "LOG_LEVEL")
		return ref, got
	}
	infoName, infoLevel := configRef("INFO")
	debugName, debugLevel := configRef("DEBUG")
	if infoLevel != "INFO" || debugLevel != "DEBUG" {
		t.Errorf("LOG_LEVEL = %q and %q, want INFO and DEBUG", infoLevel, debugLevel)
	}
	if !strings.HasPrefix(infoName, "ontology-service-config-") {
		t.Errorf("ConfigMap name %q does not carry a hash suffix", infoName)
	}
	if infoName == debugName {
		t.Errorf("ConfigMap name %q did not change with the log level", infoName)
	}
}

func TestSecretsHaveNoValues(t *testing.T) {
	p, rel := production(t)
	want := map[string]string{
		"postgres":                  "password,replication-password",
		"redis":                     "password",
		"minio":                     "root-user,root-password",
		"minio-service-credentials": "access-key,secret-key",
		"kafka":                     "cluster-id",
	}
	got := map[string]string{}
	for _, u := range mustRender(t, p, rel) {
		if u.GetKind() != "Secret" {
			continue
		}
		for _, f := range []string{"data", "stringData"} {
			if _, ok := u.Object[f]; ok {
				t.Errorf("Secret %s has %s", u.GetName(), f)
			}
		}
		if _, ok := u.GetAnnotations()[v1alpha1.AnnotationCertificate]; ok {
			continue // apply issues certificates, not random values: TestCertificateSecrets
		}
		got[u.GetName()] = u.GetAnnotations()[AnnotationGenerateKeys]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("generated secrets and their keys (-want +got):\n%s", diff)
	}
}

func TestRedisModes(t *testing.T) {
	for _, mode := range []v1alpha1.RedisMode{v1alpha1.RedisSentinel, v1alpha1.RedisStandalone} {
		t.Run(string(mode), func(t *testing.T) {
			p, rel := production(t)
			p.Spec.Infrastructure.Redis.Mode = mode
			objs := mustRender(t, p, rel)
			redis := find(objs, "StatefulSet", v1alpha1.ComponentRedis)
			if redis == nil {
				t.Fatal("no redis StatefulSet")
			}
			sentinel := find(objs, "StatefulSet", v1alpha1.ComponentRedisSentinel)
			if mode == v1alpha1.RedisStandalone {
				if sentinel != nil {
					t.Error("standalone mode renders redis-sentinel")
				}
				return
			}
			if sentinel == nil {
				t.Fatal("sentinel mode renders no redis-sentinel StatefulSet")
			}
			if n := *convert[appsv1.StatefulSet](t, sentinel).Spec.Replicas; n != 3 {
				t.Errorf("redis-sentinel replicas = %d, want 3", n)
			}
			for _, kind := range []string{"Service", "ServiceAccount", "PodDisruptionBudget"} {
				if find(objs, kind, v1alpha1.ComponentRedisSentinel) == nil {
					t.Errorf("no %s redis-sentinel", kind)
				}
			}
		})
	}
}

func TestDisabledComponentRendersNothing(t *testing.T) {
	p, rel := production(t)
	for _, c := range p.Spec.Components() {
		t.Run(c.Name, func(t *testing.T) {
			p := p.DeepCopy()
			c, _ := p.Spec.Component(c.Name)
			if c.Service != nil {
				c.Service.Enabled = ptr.To(false)
			} else {
				c.Stateful.Enabled = ptr.To(false)
			}
			for _, u := range mustRender(t, p, rel) {
				if u.GetLabels()[LabelName] == c.Name {
					t.Errorf("disabled %s still renders %s %s", c.Name, u.GetKind(), u.GetName())
				}
				if c.Name == v1alpha1.ComponentRedis && u.GetLabels()[LabelName] == v1alpha1.ComponentRedisSentinel {
					t.Errorf("disabled redis still renders %s %s", u.GetKind(), u.GetName())
				}
			}
		})
	}
}

// TestGPUOfAnotherVendor: the toleration follows the resource name, and NVIDIA's node
// label is asked for only with NVIDIA's resource; GPU rollouts replace pods one at a
// time instead of waiting for a GPU to surge onto.
func TestGPUOfAnotherVendor(t *testing.T) {
	p, rel := production(t)
	p.Spec.IntelligencePlane.ReasoningService.GPU = &v1alpha1.GPUSpec{Enabled: true, Count: 1, ResourceName: "amd.com/gpu"}
	u := find(mustRender(t, p, rel), "Deployment", v1alpha1.ComponentReasoningService)
	d := convert[appsv1.Deployment](t, u)
	if _, ok := d.Spec.Template.Spec.Containers[0].Resources.Limits["amd.com/gpu"]; !ok {
		t.Fatal("no amd.com/gpu limit")
	}
	if _, ok := d.Spec.Template.Spec.NodeSelector["nvidia.com/gpu.present"]; ok {
		t.Error("an AMD GPU service selects NVIDIA nodes")
	}
	if !slices.ContainsFunc(d.Spec.Template.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == "amd.com/gpu" }) {
		t.Errorf("tolerations %+v lack amd.com/gpu", d.Spec.Template.Spec.Tolerations)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxSurge.IntValue() != 0 || ru.MaxUnavailable.IntValue() != 1 {
		t.Errorf("GPU rollout strategy = %+v, want maxSurge 0, maxUnavailable 1", ru)
	}
}

// TestSingleWriterServices: replicated Postgres and standalone Redis have one pod that
// takes writes, and their client Service reaches only that one.
func TestSingleWriterServices(t *testing.T) {
	p, rel := production(t)
	p.Spec.Infrastructure.Redis.Mode = v1alpha1.RedisStandalone
	p.Spec.Infrastructure.Redis.Replicas = ptr.To[int32](3)
	objs := mustRender(t, p, rel)
	for _, name := range []string{v1alpha1.ComponentPostgres, v1alpha1.ComponentRedis} {
		svc := convert[corev1.Service](t, find(objs, "Service", name))
		if got := svc.Spec.Selector["statefulset.kubernetes.io/pod-name"]; got != name+"-0" {
			t.Errorf("Service %s selects pod %q, want %s-0", name, got, name)
		}
	}
	for _, u := range objs {
		if u.GetKind() == "PodDisruptionBudget" {
			if policy, _, _ := unstructured.NestedString(u.Object, "spec", "unhealthyPodEvictionPolicy"); policy != "AlwaysAllow" {
				t.Errorf("PDB %s unhealthyPodEvictionPolicy = %q, want AlwaysAllow (a failing component must not block drains)", u.GetName(), policy)
			}
		}
	}
}

// TestPodSecurityVersionIsTheAPIVersion: the pinned Pod Security version is the
// Kubernetes minor of the k8s.io/api the module requires (a test binary carries no
// dependency versions, so go.mod is read), so a bump of the libraries, and of the test
// control plane built from them, moves the pin with it.
func TestPodSecurityVersionIsTheAPIVersion(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "k8s.io/api" {
			continue
		}
		// k8s.io/api v0.N.x is Kubernetes v1.N.x.
		minor, _, _ := strings.Cut(strings.TrimPrefix(fields[1], "v0."), ".")
		if want := "v1." + minor; PodSecurityVersion != want {
			t.Errorf("PodSecurityVersion = %s, want %s (k8s.io/api %s)", PodSecurityVersion, want, fields[1])
		}
		return
	}
	t.Fatal("go.mod does not require k8s.io/api")
}

// TestPodSecurityModes: spec.tenancy.podSecurity decides the namespace's Pod Security
// labels, all pinned to PodSecurityVersion.
func TestPodSecurityModes(t *testing.T) {
	tests := []struct {
		mode v1alpha1.PodSecurityMode
		want []string // modes labelled restricted
	}{
		{mode: "", want: []string{"audit", "enforce", "warn"}},
		{mode: v1alpha1.PodSecurityEnforce, want: []string{"audit", "enforce", "warn"}},
		{mode: v1alpha1.PodSecurityWarn, want: []string{"audit", "warn"}},
		{mode: v1alpha1.PodSecurityNone},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			p, rel := production(t)
			p.Spec.Tenancy = &v1alpha1.TenancySpec{PodSecurity: tc.mode}
			ns := find(mustRender(t, p, rel), "Namespace", p.Namespace)
			if ns == nil {
				t.Fatal("no Namespace rendered")
			}
			got := map[string]string{}
			for k, v := range ns.GetLabels() {
				if strings.HasPrefix(k, podSecurityLabelPrefix) {
					got[strings.TrimPrefix(k, podSecurityLabelPrefix)] = v
				}
			}
			want := map[string]string{}
			for _, m := range tc.want {
				want[m] = "restricted"
				want[m+"-version"] = PodSecurityVersion
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pod security labels (-want +got):\n%s", diff)
			}
		})
	}
}

// imageTag is the tag of an image reference, as a test reads it.
func imageTag(t *testing.T, ref string) string {
	t.Helper()
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		t.Fatalf("image %q has no tag", ref)
	}
	return ref[i+1:]
}

// TestVersionBumpKeepsInfrastructurePods: a platform version that keeps an
// infrastructure component's image leaves its pod template byte for byte as it was, so
// the upgrade restarts no database, broker or object store for nothing; one that changes
// the image changes the template. Run over every example, from 1.5.0 to the shipped
// 1.6.0 (every image moves) and to a 1.6.0 that only bumps the version.
func TestVersionBumpKeepsInfrastructurePods(t *testing.T) {
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	from, err := catalog.Get("1.5.0")
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := catalog.Get("1.6.0")
	if err != nil {
		t.Fatal(err)
	}
	versionOnly := from
	versionOnly.Version, versionOnly.UpgradeFrom = "1.6.0", ">= 1.5.0, < 1.6.0"
	for _, name := range exampleNames() {
		for _, to := range []struct {
			name string
			rel  release.Release
		}{{"shipped", shipped}, {"version-only", versionOnly}} {
			t.Run(name+"/"+to.name, func(t *testing.T) {
				p, _ := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
				old, bumped := p.DeepCopy(), p.DeepCopy()
				old.Spec.Version, bumped.Spec.Version = from.Version, to.rel.Version
				before := podTemplates(t, mustRender(t, old, from))
				after := podTemplates(t, mustRender(t, bumped, to.rel))
				compared := 0
				for id, tpl := range before {
					if !strings.HasPrefix(id, "StatefulSet/") {
						continue
					}
					compared++
					sameImage := tpl.Spec.Containers[0].Image == after[id].Spec.Containers[0].Image
					diff := cmp.Diff(tpl, after[id])
					switch {
					case sameImage && diff != "":
						t.Errorf("%s: image unchanged, but the version bump changes the pod template (-1.5.0 +1.6.0):\n%s", id, diff)
					case !sameImage && diff == "":
						t.Errorf("%s: image changed, pod template did not", id)
					}
				}
				if compared == 0 {
					t.Fatal("no infrastructure workload compared")
				}
				if diff := cmp.Diff(before["Deployment/gateway"], after["Deployment/gateway"]); diff == "" {
					t.Error("the gateway's pod template did not change with the platform version")
				}
			})
		}
	}
}

// TestEveryContainerHasEphemeralStorage: every container and init container of every
// example requests and limits ephemeral storage, the request within the limit.
func TestEveryContainerHasEphemeralStorage(t *testing.T) {
	for _, name := range exampleNames() {
		t.Run(name, func(t *testing.T) {
			p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
			for id, tpl := range podTemplates(t, mustRender(t, p, rel)) {
				for _, c := range append(slices.Clone(tpl.Spec.InitContainers), tpl.Spec.Containers...) {
					req, hasReq := c.Resources.Requests[corev1.ResourceEphemeralStorage]
					lim, hasLim := c.Resources.Limits[corev1.ResourceEphemeralStorage]
					switch {
					case !hasReq || !hasLim:
						t.Errorf("%s container %s: ephemeral-storage request %v, limit %v; want both", id, c.Name, hasReq, hasLim)
					case req.Cmp(lim) > 0:
						t.Errorf("%s container %s: ephemeral-storage request %s above its limit %s", id, c.Name, req.String(), lim.String())
					}
				}
			}
		})
	}
}

// TestEphemeralStorageFromTheSpec: the spec's ephemeral storage is kept, and a default
// completing it never crosses it.
func TestEphemeralStorageFromTheSpec(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name             string
		requests, limits corev1.ResourceList
		wantReq, wantLim string
	}{
		{name: "cpu and memory only: defaults", requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}, wantReq: "128Mi", wantLim: "1Gi"},
		{name: "both given", requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: q("2Gi")}, limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: q("4Gi")}, wantReq: "2Gi", wantLim: "4Gi"},
		{name: "request above the default limit", requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: q("3Gi")}, wantReq: "3Gi", wantLim: "3Gi"},
		{name: "request below the default limit", requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: q("64Mi")}, wantReq: "64Mi", wantLim: "1Gi"},
		{name: "limit below the default request", limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: q("100Mi")}, wantReq: "100Mi", wantLim: "100Mi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			p.Spec.Gateway.Resources = &v1alpha1.Resources{Requests: tc.requests, Limits: tc.limits}
			tpl := podTemplates(t, mustRender(t, p, rel))["Deployment/"+v1alpha1.ComponentGateway]
			res := tpl.Spec.Containers[0].Resources
			req, lim := res.Requests[corev1.ResourceEphemeralStorage], res.Limits[corev1.ResourceEphemeralStorage]
			if req.String() != tc.wantReq || lim.String() != tc.wantLim {
				t.Errorf("ephemeral-storage request %s, limit %s; want %s, %s", req.String(), lim.String(), tc.wantReq, tc.wantLim)
			}
		})
	}
}

// TestPDBForEveryWorkloadOfSeveralPods: every workload that runs more than one pod or is
// autoscaled has a PodDisruptionBudget of its name that selects its pods and lets one go
// at a time; a single fixed pod has none (a budget would only stall a drain).
func TestPDBForEveryWorkloadOfSeveralPods(t *testing.T) {
	type variant struct {
		name   string
		mutate func(p *v1alpha1.OntoPlatform)
	}
	variants := []variant{
		{name: "as is"},
		{name: "autoscaled from 1", mutate: func(p *v1alpha1.OntoPlatform) {
			p.Spec.Gateway.Autoscaling = &v1alpha1.AutoscalingSpec{Enabled: true, MinReplicas: 1, MaxReplicas: 5, TargetCPUUtilization: 70}
		}},
	}
	for _, name := range exampleNames() {
		for _, v := range variants {
			t.Run(name+"/"+v.name, func(t *testing.T) {
				p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
				if v.mutate != nil {
					v.mutate(p)
				}
				objs := mustRender(t, p, rel)
				checked := 0
				for _, u := range objs {
					if u.GetKind() != "Deployment" && u.GetKind() != "StatefulSet" {
						continue
					}
					checked++
					id := u.GetKind() + "/" + u.GetName()
					replicas, hasReplicas, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
					hpa := find(objs, "HorizontalPodAutoscaler", u.GetName())
					want := hpa != nil || !hasReplicas || replicas > 1
					pdb := find(objs, "PodDisruptionBudget", u.GetName())
					if (pdb != nil) != want {
						t.Errorf("%s (replicas %d, HPA %v): PodDisruptionBudget %v, want %v", id, replicas, hpa != nil, pdb != nil, want)
					}
					if pdb == nil {
						continue
					}
					sel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
					labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
					for k, v := range sel {
						if labels[k] != v {
							t.Errorf("%s: PDB selects %s=%s, the pods have %q", id, k, v, labels[k])
						}
					}
					if mu, _, _ := unstructured.NestedInt64(pdb.Object, "spec", "maxUnavailable"); mu != 1 {
						t.Errorf("%s: PDB maxUnavailable %d, want 1", id, mu)
					}
				}
				if checked == 0 {
					t.Fatal("no workload rendered")
				}
			})
		}
	}
}

// TestMinReadySecondsOnEveryWorkload: every Deployment and StatefulSet waits
// spec.global.minReadySeconds with a new pod Ready before counting it available: the
// default 10 s when the spec says nothing, and 0 when it asks for 0.
func TestMinReadySecondsOnEveryWorkload(t *testing.T) {
	tests := []struct {
		example string
		set     *int32
		want    int64
	}{
		{example: "platform", want: 10},
		{example: "minimal", want: 10},
		{example: "tenant", want: 10},
		{example: "platform", set: ptr.To[int32](0), want: 0},
		{example: "platform", set: ptr.To[int32](30), want: 30},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d", tc.example, tc.want), func(t *testing.T) {
			p, rel := load(t, filepath.Join("testdata", "TestRender", tc.example+".yaml"))
			if tc.set != nil {
				p.Spec.Global.MinReadySeconds = tc.set
			}
			checked := 0
			for _, u := range mustRender(t, p, rel) {
				if u.GetKind() != "Deployment" && u.GetKind() != "StatefulSet" {
					continue
				}
				checked++
				got, ok, _ := unstructured.NestedInt64(u.Object, "spec", "minReadySeconds")
				// Zero is left out, as the API server stores it.
				if ok != (tc.want != 0) || got != tc.want {
					t.Errorf("%s/%s: minReadySeconds %d (set %v), want %d", u.GetKind(), u.GetName(), got, ok, tc.want)
				}
			}
			if checked == 0 {
				t.Fatal("no workload rendered")
			}
		})
	}
}

// TestPreStopSleepBehindServices: the main container of every pod a Service selects
// sleeps in preStop (no shell needed), so it keeps serving while endpoints catch up
// with its termination, and its grace period leaves the process time to stop after.
func TestPreStopSleepBehindServices(t *testing.T) {
	const minShutdown = 20 // seconds the process keeps after the sleep, at least
	for _, name := range exampleNames() {
		t.Run(name, func(t *testing.T) {
			p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
			objs := mustRender(t, p, rel)
			var selectors []map[string]string
			for _, u := range objs {
				if u.GetKind() == "Service" {
					sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector")
					selectors = append(selectors, sel)
				}
			}
			behind := 0
			for id, tpl := range podTemplates(t, objs) {
				if !slices.ContainsFunc(selectors, func(sel map[string]string) bool { return len(sel) > 0 && selects(sel, tpl.Labels) }) {
					continue
				}
				behind++
				c := tpl.Spec.Containers[0]
				if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
					t.Errorf("%s: container %s is behind a Service and has no preStop sleep", id, c.Name)
					continue
				}
				if c.Lifecycle.PreStop.Exec != nil || c.Lifecycle.PreStop.HTTPGet != nil {
					t.Errorf("%s: preStop does more than sleep", id)
				}
				sleep := c.Lifecycle.PreStop.Sleep.Seconds
				grace := ptr.Deref(tpl.Spec.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)
				if sleep < 1 || grace < sleep+minShutdown {
					t.Errorf("%s: preStop sleeps %d s of a %d s grace period; want at least 1 s, and %d s left after it", id, sleep, grace, minShutdown)
				}
			}
			if behind == 0 {
				t.Fatal("no pod behind a Service")
			}
		})
	}
}

// selects reports whether selector matches labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestDeploymentsSpread: every service Deployment spreads its pods over zones and
// nodes, counting only its own revision's pods (pod-template-hash) and never leaving
// a pod Pending for it; whatever its count, so a scale does not change its template.
func TestDeploymentsSpread(t *testing.T) {
	for _, name := range exampleNames() {
		t.Run(name, func(t *testing.T) {
			p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
			objs := mustRender(t, p, rel)
			for _, u := range objs {
				if u.GetKind() != "Deployment" {
					continue
				}
				d := convert[appsv1.Deployment](t, u)
				keys := map[string]bool{}
				for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
					keys[c.TopologyKey] = true
					if c.WhenUnsatisfiable != corev1.ScheduleAnyway || !slices.Equal(c.MatchLabelKeys, []string{"pod-template-hash"}) {
						t.Errorf("Deployment %s: %s spread is %s with matchLabelKeys %v; want ScheduleAnyway, [pod-template-hash]", d.Name, c.TopologyKey, c.WhenUnsatisfiable, c.MatchLabelKeys)
					}
					if c.LabelSelector == nil || !selects(c.LabelSelector.MatchLabels, d.Spec.Template.Labels) {
						t.Errorf("Deployment %s: %s spread does not select its pods", d.Name, c.TopologyKey)
					}
				}
				if !keys["topology.kubernetes.io/zone"] || !keys["kubernetes.io/hostname"] {
					t.Errorf("Deployment %s spreads over %v; want zone and hostname", d.Name, keys)
				}
			}
		})
	}
}

// TestScaleKeepsThePodTemplate: a service scaled from one replica to three renders the
// same pod template, so kubectl onto scale (and an autoscaler's floor) restarts
// nothing.
func TestScaleKeepsThePodTemplate(t *testing.T) {
	p, rel := load(t, filepath.Join("testdata", "TestRender", "minimal.yaml"))
	template := func(replicas int32) any {
		q := p.DeepCopy()
		q.Spec.Gateway.Replicas = &replicas
		u := find(mustRender(t, q, rel), "Deployment", "gateway")
		if u == nil {
			t.Fatal("no gateway Deployment")
		}
		tpl, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
		return tpl
	}
	if one, three := template(1), template(3); !reflect.DeepEqual(one, three) {
		t.Fatalf("gateway's pod template differs between 1 and 3 replicas:\n1: %v\n3: %v", one, three)
	}
}
