package testcluster_test

// Tests of the test cluster itself: each proves one thing the project's
// integration tests rely on, against the real control plane.

import (
	"context"
	"fmt"
	"k8s.io/utils/ptr"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// deployment returns a Deployment of replicas pods of one container.
func deployment(ns, name, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "main",
					Image: image,
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("100m"),
						corev1.ResourceMemory: resource.MustParse("64Mi"),
					}},
				}}},
			},
		},
	}
}

// livePods lists the pods of app that are not being deleted.
func livePods(t *testing.T, c *testcluster.Cluster, ns, app string) []corev1.Pod {
	t.Helper()
	list, err := c.Kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func TestNodes(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	nodes, err := c.Kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	zones := map[string]bool{}
	workers := 0
	var gpu *corev1.Node
	for i := range nodes.Items {
		n := &nodes.Items[i]
		switch {
		case strings.HasPrefix(n.Name, testcluster.WorkerNodePrefix):
			workers++
			zones[n.Labels[corev1.LabelTopologyZone]] = true
			if !testcluster.NodeReady(n) {
				t.Errorf("worker %s is not Ready: %+v", n.Name, n.Status.Conditions)
			}
			if n.Labels[corev1.LabelHostname] != n.Name {
				t.Errorf("worker %s: label %s=%q", n.Name, corev1.LabelHostname, n.Labels[corev1.LabelHostname])
			}
			for res, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "16", corev1.ResourceMemory: "64Gi", corev1.ResourcePods: "110"} {
				if got := n.Status.Allocatable[res]; got.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("worker %s: allocatable %s = %s, want %s", n.Name, res, got.String(), want)
				}
			}
		case n.Name == testcluster.NodeGPU:
			gpu = n
		}
	}
	if workers < 4 {
		t.Errorf("%d worker nodes, want at least 4", workers)
	}
	if len(zones) < 2 {
		t.Errorf("workers span zones %v, want at least 2", zones)
	}

	if os.Getenv("ONTO_TESTCLUSTER_GPU") == "0" {
		if gpu != nil {
			t.Errorf("GPU node %s exists although ONTO_TESTCLUSTER_GPU=0", gpu.Name)
		}
		return
	}
	if gpu == nil {
		t.Fatalf("no GPU node %s", testcluster.NodeGPU)
	}
	if !testcluster.NodeReady(gpu) {
		t.Errorf("GPU node is not Ready: %+v", gpu.Status.Conditions)
	}
	if got := gpu.Status.Allocatable[testcluster.GPUResource]; got.Cmp(resource.MustParse("4")) != 0 {
		t.Errorf("GPU node allocatable %s = %s, want 4", testcluster.GPUResource, got.String())
	}
	if gpu.Labels[testcluster.GPUPresentLabel] != "true" {
		t.Errorf("GPU node label %s = %q, want true", testcluster.GPUPresentLabel, gpu.Labels[testcluster.GPUPresentLabel])
	}
	if !slices.ContainsFunc(gpu.Spec.Taints, func(tn corev1.Taint) bool {
		return tn.Key == testcluster.GPUTaintKey && tn.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("GPU node taints %v lack %s:NoSchedule", gpu.Spec.Taints, testcluster.GPUTaintKey)
	}
}

func TestDeploymentRollout(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	d := deployment(ns, "web", "registry.example/web:1.0", 3)
	if err := c.Client.Create(ctx, d); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	if _, err := testcluster.WaitFor(ctx, c, d, time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return testcluster.DeploymentComplete(d), nil
	}); err != nil {
		t.Fatalf("deployment never became available: %v; status %+v", err, d.Status)
	}

	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"registry.example/web:1.1"}]}}}}`)
	if _, err := c.Kube.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("update image: %v", err)
	}
	if _, err := testcluster.WaitFor(ctx, c, d, time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return d.Generation == 2 && testcluster.DeploymentComplete(d), nil
	}); err != nil {
		t.Fatalf("rollout did not complete: %v; status %+v", err, d.Status)
	}

	pods := livePods(t, c, ns, "web")
	for _, p := range pods {
		if img := p.Spec.Containers[0].Image; img != "registry.example/web:1.1" {
			t.Errorf("pod %s runs %s after the rollout", p.Name, img)
		}
	}
	rss, err := c.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("list replicasets: %v", err)
	}
	if len(rss.Items) != 2 {
		t.Fatalf("%d ReplicaSets, want 2 (old and new)", len(rss.Items))
	}
	for _, rs := range rss.Items {
		want := int32(0)
		if rs.Spec.Template.Spec.Containers[0].Image == "registry.example/web:1.1" {
			want = 3
		}
		if *rs.Spec.Replicas != want {
			t.Errorf("ReplicaSet %s (%s) has %d replicas, want %d", rs.Name, rs.Spec.Template.Spec.Containers[0].Image, *rs.Spec.Replicas, want)
		}
	}
}

func TestStatefulSetVolumesBind(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	class := testcluster.StorageClassFastSSD
	if os.Getenv("ONTO_TESTCLUSTER_FAST_SSD") == "0" {
		// The missing-class case: the class must really be absent.
		err := c.Client.Get(ctx, types.NamespacedName{Name: testcluster.StorageClassFastSSD}, &storagev1.StorageClass{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("StorageClass %s: got %v, want NotFound with ONTO_TESTCLUSTER_FAST_SSD=0", testcluster.StorageClassFastSSD, err)
		}
		class = testcluster.StorageClassStandard
	}
	ns := c.Namespace(t)
	labels := map[string]string{"app": "db"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  labels,
			Ports:     []corev1.ServicePort{{Name: "pg", Port: 5432}},
		},
	}
	if err := c.Client.Create(ctx, svc); err != nil {
		t.Fatalf("create service: %v", err)
	}
	replicas := int32(3)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:         "pg",
					Image:        "registry.example/postgres:16",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: &class,
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi"),
					}},
				},
			}},
		},
	}
	if err := c.Client.Create(ctx, sts); err != nil {
		t.Fatalf("create statefulset: %v", err)
	}
	if _, err := testcluster.WaitFor(ctx, c, sts, 2*time.Minute, func(s *appsv1.StatefulSet) (bool, error) {
		return s.Status.ReadyReplicas == 3, nil
	}); err != nil {
		t.Fatalf("statefulset not ready: %v; status %+v", err, sts.Status)
	}

	for i := range 3 {
		pod, err := c.Kube.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("db-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get pod: %v", err)
		}
		if pod.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s, want Running", pod.Name, pod.Status.Phase)
		}
		pvc, err := c.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("data-db-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get pvc: %v", err)
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			t.Errorf("PVC %s is %s, want Bound", pvc.Name, pvc.Status.Phase)
			continue
		}
		pv, err := c.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get pv: %v", err)
		}
		if pv.Spec.StorageClassName != class {
			t.Errorf("PV %s has class %q, want %q", pv.Name, pv.Spec.StorageClassName, class)
		}
		// WaitForFirstConsumer: the volume lives on the node the pod was scheduled to.
		if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil ||
			!slices.Contains(pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values, pod.Spec.NodeName) {
			t.Errorf("PV %s node affinity %+v does not pin it to pod %s's node %s", pv.Name, pv.Spec.NodeAffinity, pod.Name, pod.Spec.NodeName)
		}
	}
}

func TestCRDValidationRule(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	group := testcluster.UniqueName(t, "g") + ".test.onto.dev"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "platforms." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "platforms", Singular: "platform", Kind: "Platform", ListKind: "PlatformList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {
							Type: "object",
							Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"replicas":    {Type: "integer"},
								"minReplicas": {Type: "integer"},
							},
							XValidations: apiextensionsv1.ValidationRules{{
								Rule:    "self.minReplicas <= self.replicas",
								Message: "minReplicas must be <= replicas",
							}},
						},
					},
				}},
			}},
		},
	}
	if err := c.Client.Create(ctx, crd); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Client.Delete(ctx, crd); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD: %v", err)
		}
	})
	if _, err := testcluster.WaitFor(ctx, c, crd, time.Minute, func(crd *apiextensionsv1.CustomResourceDefinition) (bool, error) {
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("CRD not established: %v", err)
	}

	ns := c.Namespace(t)
	res := c.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "platforms"}).Namespace(ns)
	platform := func(name string, replicas, minReplicas int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Platform",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"replicas": replicas, "minReplicas": minReplicas},
		}}
	}
	// Established can come a moment before the new endpoint serves.
	if err := testcluster.Poll(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := res.Create(ctx, platform("good", 3, 2), metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("create a valid Platform: %v", err)
	}
	_, err := res.Create(ctx, platform("bad", 1, 2), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "minReplicas must be <= replicas") {
		t.Fatalf("create an invalid Platform: got %v, want Invalid with the rule's message", err)
	}
}

// applyDeployment is the apply configuration of a one-container Deployment.
func applyDeployment(ns, image string, replicas int32) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(map[string]string{"app": "web"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage(image)))))
}

func TestServerSideApply(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)

	t.Run("dry run leaves the live object unchanged", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ns := c.Namespace(t)
		deps := c.Kube.AppsV1().Deployments(ns)
		if _, err := deps.Apply(ctx, applyDeployment(ns, "registry.example/web:1.0", 3), metav1.ApplyOptions{FieldManager: "onto"}); err != nil {
			t.Fatalf("apply: %v", err)
		}
		dry, err := deps.Apply(ctx, applyDeployment(ns, "registry.example/web:1.0", 7),
			metav1.ApplyOptions{FieldManager: "onto", DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry-run apply: %v", err)
		}
		if *dry.Spec.Replicas != 7 {
			t.Errorf("dry-run result has %d replicas, want 7", *dry.Spec.Replicas)
		}
		if !slices.ContainsFunc(dry.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == "onto" }) {
			t.Errorf("dry-run result's managed fields lack manager onto: %+v", dry.ManagedFields)
		}
		live, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if *live.Spec.Replicas != 3 || live.Generation != 1 {
			t.Errorf("live object changed by a dry run: replicas %d, generation %d", *live.Spec.Replicas, live.Generation)
		}
	})

	t.Run("conflict with another field manager", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ns := c.Namespace(t)
		deps := c.Kube.AppsV1().Deployments(ns)
		if _, err := deps.Apply(ctx, applyDeployment(ns, "registry.example/web:1.0", 3), metav1.ApplyOptions{FieldManager: "onto"}); err != nil {
			t.Fatalf("apply: %v", err)
		}
		// Someone else changes the image the way `kubectl set image` does.
		patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"registry.example/web:hotfix"}]}}}}`)
		if _, err := deps.Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-set"}); err != nil {
			t.Fatalf("patch: %v", err)
		}
		_, err := deps.Apply(ctx, applyDeployment(ns, "registry.example/web:1.0", 3), metav1.ApplyOptions{FieldManager: "onto"})
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `"kubectl-set"`) {
			t.Fatalf("apply over a field owned by kubectl-set: got %v, want a conflict naming kubectl-set", err)
		}
		got, err := deps.Apply(ctx, applyDeployment(ns, "registry.example/web:1.0", 3), metav1.ApplyOptions{FieldManager: "onto", Force: true})
		if err != nil {
			t.Fatalf("forced apply: %v", err)
		}
		if img := got.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:1.0" {
			t.Errorf("image after forced apply = %s", img)
		}
	})
}

func TestPDBEviction(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	tests := []struct {
		name           string
		minAvailable   *intstr.IntOrString
		maxUnavailable *intstr.IntOrString
		allowed        int32
		wantBlocked    bool
	}{
		{name: "minAvailable all blocks", minAvailable: ptr.To(intstr.FromInt32(3)), allowed: 0, wantBlocked: true},
		{name: "maxUnavailable 1 allows", maxUnavailable: ptr.To(intstr.FromInt32(1)), allowed: 1, wantBlocked: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ns := c.Namespace(t)
			d := deployment(ns, "web", "registry.example/web:1.0", 3)
			if err := c.Client.Create(ctx, d); err != nil {
				t.Fatalf("create deployment: %v", err)
			}
			pdb := &policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec: policyv1.PodDisruptionBudgetSpec{
					Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					MinAvailable:   tc.minAvailable,
					MaxUnavailable: tc.maxUnavailable,
				},
			}
			if err := c.Client.Create(ctx, pdb); err != nil {
				t.Fatalf("create PDB: %v", err)
			}
			if _, err := testcluster.WaitFor(ctx, c, pdb, time.Minute, func(p *policyv1.PodDisruptionBudget) (bool, error) {
				s := p.Status
				return s.ObservedGeneration == p.Generation && s.ExpectedPods == 3 && s.CurrentHealthy == 3 &&
					s.DisruptionsAllowed == tc.allowed, nil
			}); err != nil {
				t.Fatalf("PDB status: %v; %+v", err, pdb.Status)
			}
			pod := livePods(t, c, ns, "web")[0]
			err := c.Kube.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name}})
			if tc.wantBlocked {
				if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "disruption budget") {
					t.Fatalf("evict: got %v, want 429 (would violate the disruption budget)", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("evict: %v", err)
			}
		})
	}
}

func TestHPAScalesOnSimulatedCPU(t *testing.T) {
	mustrun.SkipIfShort(t, "takes 1-2 minutes: metrics-server needs two 15 s scrapes before the HPA acts")
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	d := deployment(ns, "busy", "registry.example/busy:1.0", 2)
	// 180m used of 100m requested: 180 % against a 50 % target.
	d.Spec.Template.Annotations = map[string]string{testcluster.UsageCPUAnnotation: "180m"}
	if err := c.Client.Create(ctx, d); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "busy"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "busy"},
			MinReplicas:    ptr.To(int32(2)),
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))},
				},
			}},
		},
	}
	if err := c.Client.Create(ctx, hpa); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	start := time.Now()
	// The metrics pipeline (kwok usage -> metrics-server -> HPA) first: the HPA
	// reports the simulated 180 % for one sync period before it scales.
	if _, err := testcluster.WaitFor(ctx, c, hpa, 4*time.Minute, func(h *autoscalingv2.HorizontalPodAutoscaler) (bool, error) {
		for _, m := range h.Status.CurrentMetrics {
			if m.Resource != nil && m.Resource.Current.AverageUtilization != nil && *m.Resource.Current.AverageUtilization >= 150 {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("HPA never saw the simulated CPU usage: %v; HPA status %+v", err, hpa.Status)
	}
	t.Logf("HPA saw %d%% CPU after %s", *hpa.Status.CurrentMetrics[0].Resource.Current.AverageUtilization, time.Since(start).Round(time.Second))
	if _, err := testcluster.WaitFor(ctx, c, d, 2*time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return *d.Spec.Replicas > 2, nil
	}); err != nil {
		t.Fatalf("HPA did not scale up: %v", err)
	}
	t.Logf("HPA scaled the deployment to %d replicas after %s", *d.Spec.Replicas, time.Since(start).Round(time.Second))
}

// chaosPod creates a bare pod with the given labels.
func chaosPod(t *testing.T, c *testcluster.Cluster, ns, name string, labels map[string]string) *corev1.Pod {
	t.Helper()
	grace := int64(0)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "main", Image: "registry.example/app:1.0"}},
			TerminationGracePeriodSeconds: &grace,
		},
	}
	if err := c.Client.Create(t.Context(), p); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return p
}

func TestPodChaos(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	tests := []struct {
		mode testcluster.ChaosMode
		// later: set the label on a pod that already runs Ready, instead of at creation.
		later bool
		want  func(p *corev1.Pod) bool
		// stays: after want holds, it must hold at every look for this long.
		stays time.Duration
	}{
		{mode: testcluster.ChaosCrashLoop, want: func(p *corev1.Pod) bool {
			s := p.Status.ContainerStatuses
			return len(s) == 1 && s[0].RestartCount >= 2 && s[0].State.Waiting != nil &&
				s[0].State.Waiting.Reason == "CrashLoopBackOff" && s[0].LastTerminationState.Terminated != nil &&
				!testcluster.PodReady(p)
		}},
		{mode: testcluster.ChaosOOMKilled, want: func(p *corev1.Pod) bool {
			s := p.Status.ContainerStatuses
			return p.Status.Phase == corev1.PodRunning && len(s) == 1 && s[0].RestartCount == 1 &&
				s[0].LastTerminationState.Terminated != nil && s[0].LastTerminationState.Terminated.Reason == "OOMKilled" &&
				s[0].LastTerminationState.Terminated.ExitCode == 137 && s[0].State.Running != nil
		}},
		{mode: testcluster.ChaosEvicted, want: evicted},
		{mode: testcluster.ChaosEvicted, later: true, want: evicted},
		{mode: testcluster.ChaosNeverReady, want: neverReady, stays: 3 * time.Second},
		{mode: testcluster.ChaosNeverReady, later: true, want: neverReady, stays: 3 * time.Second},
	}
	for _, tc := range tests {
		name := string(tc.mode)
		if tc.later {
			name += " labelled later"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			podName := testcluster.UniqueName(t, "p")
			var p *corev1.Pod
			if tc.later {
				p = chaosPod(t, c, ns, podName, nil)
				if _, err := testcluster.WaitFor(ctx, c, p, time.Minute, func(p *corev1.Pod) (bool, error) {
					return testcluster.PodReady(p), nil
				}); err != nil {
					t.Fatalf("pod never Ready: %v", err)
				}
				if err := c.SetPodChaos(ctx, ns, podName, tc.mode); err != nil {
					t.Fatal(err)
				}
			} else {
				p = chaosPod(t, c, ns, podName, map[string]string{testcluster.ChaosLabel: string(tc.mode)})
			}
			if _, err := testcluster.WaitFor(ctx, c, p, time.Minute, func(p *corev1.Pod) (bool, error) {
				return tc.want(p), nil
			}); err != nil {
				t.Fatalf("pod does not show %s: %v; status %+v", tc.mode, err, p.Status)
			}
			if tc.stays > 0 {
				if _, err := testcluster.StaysFor(ctx, c, p, tc.stays, func(p *corev1.Pod) (bool, error) {
					return tc.want(p), nil
				}); err != nil {
					t.Fatalf("pod left the %s state within %s: %v; status %+v", tc.mode, tc.stays, err, p.Status)
				}
			}
		})
	}
}

func evicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" &&
		slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue
		})
}

func neverReady(p *corev1.Pod) bool {
	s := p.Status.ContainerStatuses
	return p.Status.Phase == corev1.PodRunning && len(s) == 1 && s[0].State.Running != nil && !s[0].Ready &&
		!testcluster.PodReady(p) && p.Status.PodIP != ""
}

func TestCrashLoopDeploymentUnavailable(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	d := deployment(ns, "crash", "registry.example/crash:1.0", 2)
	d.Spec.Template.Labels[testcluster.ChaosLabel] = string(testcluster.ChaosCrashLoop)
	if err := c.Client.Create(ctx, d); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	// Pods first run and are Ready (fast stage), then crash; wait for the crash.
	if _, err := testcluster.WaitFor(ctx, c, d, time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return d.Status.Replicas == 2 && d.Status.UnavailableReplicas == 2, nil
	}); err != nil {
		t.Fatalf("crash-looping deployment: %v; status %+v", err, d.Status)
	}
}

func TestNeverReadyImage(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	bad := "registry.example/api:" + testcluster.UniqueName(t, "bad")
	c.NeverReadyImage(t, ns, bad)

	d := deployment(ns, "api", "registry.example/api:1.0", 2)
	if err := c.Client.Create(ctx, d); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	if _, err := testcluster.WaitFor(ctx, c, d, time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return testcluster.DeploymentComplete(d), nil
	}); err != nil {
		t.Fatalf("other images must still become Ready: %v; status %+v", err, d.Status)
	}
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"` + bad + `"}]}}}}`)
	if _, err := c.Kube.AppsV1().Deployments(ns).Patch(ctx, "api", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("update image: %v", err)
	}
	// The rollout starts (new pods run) but gets stuck: the new pods never become Ready.
	if _, err := testcluster.WaitFor(ctx, c, d, time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return d.Status.ObservedGeneration == 2 && d.Status.UpdatedReplicas >= 1, nil
	}); err != nil {
		t.Fatalf("rollout did not start: %v; status %+v", err, d.Status)
	}
	if _, err := testcluster.StaysFor(ctx, c, d, 3*time.Second, func(d *appsv1.Deployment) (bool, error) {
		return !testcluster.DeploymentComplete(d), nil
	}); err != nil {
		t.Fatalf("rollout to %s: %v; want it stuck; status %+v", bad, err, d.Status)
	}
	for _, p := range livePods(t, c, ns, "api") {
		isBad := p.Spec.Containers[0].Image == bad
		if isBad && (p.Status.Phase != corev1.PodRunning || testcluster.PodReady(&p)) {
			t.Errorf("pod %s of the bad image: phase %s, ready %t; want Running, not Ready", p.Name, p.Status.Phase, testcluster.PodReady(&p))
		}
		if !isBad && !testcluster.PodReady(&p) {
			t.Errorf("pod %s of the old image is not Ready", p.Name)
		}
	}
}

func TestNodeNotReady(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	// A node of its own: a shared worker going NotReady would disturb parallel tests.
	node := c.NewNode(t, nil, []corev1.Taint{{Key: "onto.dev/test-node", Value: "true", Effect: corev1.TaintEffectNoSchedule}})

	if err := c.SetNodeNotReady(ctx, node.Name, true); err != nil {
		t.Fatal(err)
	}
	if _, err := testcluster.WaitFor(ctx, c, node, time.Minute, func(n *corev1.Node) (bool, error) {
		tainted := slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == corev1.TaintNodeNotReady })
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionFalse && cond.Reason == "nodeFailed" && tainted, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("node did not go NotReady with the not-ready taint: %v; %+v %+v", err, node.Spec.Taints, node.Status.Conditions)
	}

	if err := c.SetNodeNotReady(ctx, node.Name, false); err != nil {
		t.Fatal(err)
	}
	if _, err := testcluster.WaitFor(ctx, c, node, time.Minute, func(n *corev1.Node) (bool, error) {
		return testcluster.NodeReady(n), nil
	}); err != nil {
		t.Fatalf("node did not recover: %v; %+v", err, node.Status.Conditions)
	}
}
