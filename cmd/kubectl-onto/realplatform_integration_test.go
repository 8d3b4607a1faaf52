/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/internal/testimages"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// TestRealPlatformMinimal: the minimal platform runs on the real nodes from the test
// catalog (test/releases: the sample service standing in for every platform service,
// Postgres and Redis from Debian's packages), with Kafka external (a kfake broker,
// since no Kafka image can be built here). apply waits until every pod is Ready, and
// the sample service is Ready only while every backing service it uses answers with
// the address and credentials the render gave it: a green apply means each
// connection worked, through the platform's own protocols.
func TestRealPlatformMinimal(t *testing.T) {
	c := testcluster.New(t)
	real := c.RealNodes(t)
	ns := c.Namespace(t)
	kafka := startKafka(t, c, real, ns)
	file := realPlatformFile(t, ns, real, fmt.Sprintf(`  infrastructure:
    kafka:
      external:
        host: %s
        port: %d
`, kafka, testimages.KafkaPort))
	start := time.Now()
	r := runCmd(t, "apply", "-f", file, "--releases", testReleases(t), "--timeout", "5m", "--kubeconfig", c.Kubeconfig)
	if r.code != 0 {
		t.Fatalf("apply on the real nodes: exit %d\n%s\n%s", r.code, r.stderr, describeUnready(t, c, ns))
	}
	t.Logf("minimal platform Ready on the real nodes in %.1fs", time.Since(start).Seconds())
	checkServicesWork(t, c, ns, "1.6.0")
}

// checkServicesWork asks every pod of every platform service in ns for one
// request's worth of work (the sample service's GET /work, from inside the pod: its
// image has no shell) and checks that each backing service the test catalog says
// it uses answered (a SQL write, a Redis round trip, an S3 put, a Kafka produce) and
// no other was configured, and that the gateway reached every service upstream.
func checkServicesWork(t *testing.T, c *testcluster.Cluster, ns, version string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testReleases(t), version+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := release.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := c.Kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=onto-platform"})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pods.Items {
		component := p.Labels["app.kubernetes.io/name"]
		ci, ok := rel.Components[component]
		if !ok || ci.Uses == nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue // infrastructure, or a Job's pod
		}
		out, err := exec.CommandContext(t.Context(), c.Kubectl(t), "--kubeconfig", c.Kubeconfig, "-n", ns, "exec", p.Name, "-c", component, "--",
			"/sample-service", "get", "http://localhost:8080/work").CombinedOutput()
		if err != nil {
			t.Errorf("%s: GET /work in pod %s: %v\n%s", component, p.Name, err, out)
			continue
		}
		var res struct {
			OK       bool
			Backends map[string]string
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Errorf("%s: /work answered %q: %v", component, out, err)
			continue
		}
		var got []string
		for b := range res.Backends {
			if !strings.HasPrefix(b, "upstream/") {
				got = append(got, b)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(ci.Uses))
		if !res.OK || !slices.Equal(got, want) {
			t.Errorf("%s (pod %s): work ok=%t on %v, want ok on %v: %v", component, p.Name, res.OK, got, want, res.Backends)
		}
		if component == "gateway" && len(res.Backends) == 0 {
			t.Errorf("gateway reached no upstream: %v", res.Backends)
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("no pod of a platform service in %s", ns)
	}
	t.Logf("%d service pods did their work on every backing service they use", checked)
}

// testReleases is the test catalog's directory (--releases).
func testReleases(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "releases"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// realPlatformFile writes the minimal example into ns with the test images, every pod
// on the real nodes, and spec (lines under spec:, two-space indented) added.
func realPlatformFile(t *testing.T, ns string, real *testcluster.RealNodes, spec string) string {
	t.Helper()
	tol := real.Toleration()
	global := fmt.Sprintf(`  global:
    imageRegistry: %s
    nodeSelector: {%s: real}
    tolerations: [{key: %s, operator: %s, value: %q, effect: %s}]
`, testimages.ImageRegistry, testcluster.RealNodeLabel, tol.Key, tol.Operator, tol.Value, tol.Effect)
	return platformFile(t, ns, global+spec)
}

// startKafka runs the test images' Kafka-protocol broker (kfake) in ns on a real node
// behind a Service "kafka", and returns the Service's host name.
func startKafka(t *testing.T, c *testcluster.Cluster, real *testcluster.RealNodes, ns string) string {
	t.Helper()
	ctx := t.Context()
	version, err := testimages.KafkaVersion(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "kafka"}
	spec := corev1.PodSpec{
		SecurityContext:    &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))},
		EnableServiceLinks: ptr.To(false),
		Containers: []corev1.Container{{
			Name:  "kafka",
			Image: real.Image("onto/kafka:" + strings.TrimPrefix(version, "v")),
			// A rebuilt test image keeps its tag: pull what the registry has now.
			ImagePullPolicy: corev1.PullAlways,
			Env: []corev1.EnvVar{{Name: "ONTO_KAFKA_ADVERTISED_HOST", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"},
			}}},
			Ports:           []corev1.ContainerPort{{Name: "kafka", ContainerPort: testimages.KafkaPort}},
			ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(testimages.KafkaPort)}}, PeriodSeconds: 1},
			SecurityContext: testcluster.RestrictedSecurityContext(),
		}},
	}
	real.Place(&spec, "")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "kafka", Port: testimages.KafkaPort, TargetPort: intstr.FromInt32(testimages.KafkaPort)}}},
	}
	if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := testcluster.WaitFor(ctx, c, d, 2*time.Minute, func(d *appsv1.Deployment) (bool, error) {
		return d.Status.ReadyReplicas == 1, nil
	}); err != nil {
		t.Fatalf("kafka broker not Ready: %v\n%s", err, describeUnready(t, c, ns))
	}
	return "kafka." + ns + ".svc.cluster.local"
}

// describeUnready describes every pod of ns that is not Ready, as a user would look at
// them (kubectl describe pod, kubectl logs).
func describeUnready(t *testing.T, c *testcluster.Cluster, ns string) string {
	t.Helper()
	pods, err := c.Kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("list pods: %v", err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		if !testcluster.PodReady(&p) {
			b.WriteString(c.DescribePod(ns, p.Name))
		}
	}
	if b.Len() == 0 {
		return "(every pod of " + ns + " is Ready)"
	}
	return b.String()
}
