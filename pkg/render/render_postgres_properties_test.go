/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// postgresReplicas is the number of postgres pods p runs, 0 when postgres is disabled.
func postgresReplicas(p *v1alpha1.OntoPlatform) int32 {
	pg, ok := p.Spec.Component(v1alpha1.ComponentPostgres)
	if !ok || !pg.Enabled() {
		return 0
	}
	return pg.DesiredReplicas()
}

// postgresInputs are every example and profile, and each of the two shapes forced on
// the production example and the minimal one, so both shapes are checked whatever the
// examples say.
func postgresInputs(t *testing.T) map[string]input {
	t.Helper()
	out := everyInput(t)
	for _, base := range []string{"example/platform", "example/minimal"} {
		for _, n := range []int32{0, 1, 2, 3} {
			in := out[base]
			p := in.p.DeepCopy()
			p.Spec.Infrastructure.Postgres.Replicas = ptr.To(n)
			out[fmt.Sprintf("%s with postgres.replicas %d", base, n)] = input{p, in.rel}
		}
	}
	return out
}

// TestPostgresReplication: with more than one replica, postgres is one primary and hot
// standbys: the replication password is a generated Secret key that reaches pods only
// by reference, the postgres Service selects exactly one pod (pod 0), postgres-read
// selects every pod, each pod has the base-backup init container (the primary's skips
// itself at run time), and the services using postgres are told the read address. With
// one replica, or none, no standby part is rendered; the primary's part is, so that a
// scale-up works.
func TestPostgresReplication(t *testing.T) {
	replicated, single := 0, 0
	for name, in := range postgresInputs(t) {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, in.p, in.rel)
			n := postgresReplicas(in.p)
			if n > 1 {
				replicated++
				checkReplicated(t, objs, in.p.Namespace, n)
			} else {
				single++
				checkSingle(t, objs)
			}
			checkNoPasswordValue(t, objs)
		})
	}
	if replicated == 0 || single == 0 {
		t.Fatalf("%d replicated and %d single postgres inputs; the test needs both", replicated, single)
	}
}

func checkReplicated(t *testing.T, objs []*unstructured.Unstructured, ns string, n int32) {
	t.Helper()
	secret := find(objs, "Secret", v1alpha1.ComponentPostgres)
	if secret == nil {
		t.Fatal("no postgres Secret")
	}
	if keys := strings.Split(secret.GetAnnotations()[AnnotationGenerateKeys], ","); !slices.Contains(keys, "replication-password") {
		t.Errorf("postgres Secret generates %v, want replication-password among them", keys)
	}

	sts := convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentPostgres))
	pods := statefulPods(sts, n)
	if got := selected(t, objs, v1alpha1.ComponentPostgres, pods); !slices.Equal(got, []string{"postgres-0"}) {
		t.Errorf("Service postgres selects %v, want exactly the primary [postgres-0]", got)
	}
	if got := selected(t, objs, postgresReadService, pods); len(got) != int(n) {
		t.Errorf("Service %s selects %v, want all %d pods", postgresReadService, got, n)
	}

	spec := sts.Spec.Template.Spec
	checkPrimaryReady(t, objs, spec)
	if args := strings.Join(spec.Containers[0].Args, " "); !strings.Contains(args, "wal_keep_size=") {
		t.Errorf("postgres args %q keep no WAL for standbys that fall behind (wal_keep_size)", args)
	}
	i := slices.IndexFunc(spec.InitContainers, func(c corev1.Container) bool { return c.Name == "basebackup" })
	if i < 0 {
		t.Fatalf("postgres pods have no basebackup init container: %v", spec.InitContainers)
	}
	init := spec.InitContainers[i]
	script := strings.Join(init.Command, " ")
	for _, want := range []string{"pg_basebackup", " -R ", "-U replicator", `"$PGDATA/PG_VERSION"`} {
		if !strings.Contains(script, want) {
			t.Errorf("basebackup init container's command lacks %q:\n%s", want, script)
		}
	}
	if init.Image != spec.Containers[0].Image {
		t.Errorf("basebackup image %q, want the server's %q (pg_basebackup must match its version)", init.Image, spec.Containers[0].Image)
	}
	if !slices.ContainsFunc(init.Env, isSecretRef("PGPASSWORD", "replication-password")) {
		t.Errorf("basebackup init container does not read PGPASSWORD from postgres/replication-password: %v", init.Env)
	}
	if !slices.ContainsFunc(init.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "data" }) {
		t.Error("basebackup init container does not mount the data volume")
	}

	clients := 0
	for _, u := range objs {
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		if u.GetKind() != "ConfigMap" || data["POSTGRES_HOST"] == "" {
			continue
		}
		clients++
		if want := postgresReadService + "." + ns + ".svc"; data["POSTGRES_READ_HOST"] != want {
			t.Errorf("ConfigMap %s: POSTGRES_READ_HOST = %q, want %q", u.GetName(), data["POSTGRES_READ_HOST"], want)
		}
	}
	if clients == 0 {
		t.Error("no service is configured with POSTGRES_HOST")
	}
}

// checkPrimaryReady: every postgres, replicated or not, can be a primary that standbys
// copy: WAL for replication, the replication user by its initdb script and password.
// A single postgres has it too, so that scaling up needs no change to pod 0 first (the
// StatefulSet controller creates the new pods before it updates the old).
func checkPrimaryReady(t *testing.T, objs []*unstructured.Unstructured, spec corev1.PodSpec) {
	t.Helper()
	main := spec.Containers[0]
	args := strings.Join(main.Args, " ")
	for _, want := range []string{"wal_level=replica", "max_wal_senders=", "hot_standby=on"} {
		if !strings.Contains(args, want) {
			t.Errorf("postgres args %q lack %s", args, want)
		}
	}
	if !slices.ContainsFunc(main.Env, isSecretRef("REPLICATION_PASSWORD", "replication-password")) {
		t.Errorf("postgres container does not read REPLICATION_PASSWORD from postgres/replication-password: %v", main.Env)
	}
	var initdb string
	for _, m := range main.VolumeMounts {
		if m.MountPath == "/docker-entrypoint-initdb.d" {
			initdb = m.Name
		}
	}
	vi := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == initdb })
	if initdb == "" || vi < 0 || spec.Volumes[vi].ConfigMap == nil {
		t.Fatal("no ConfigMap mounted at /docker-entrypoint-initdb.d")
	}
	cm := find(objs, "ConfigMap", spec.Volumes[vi].ConfigMap.Name)
	if cm == nil {
		t.Fatalf("ConfigMap %s mounted at /docker-entrypoint-initdb.d is not rendered", spec.Volumes[vi].ConfigMap.Name)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	var scripts string
	for _, v := range data {
		scripts += v
	}
	for _, want := range []string{"CREATE ROLE replicator WITH REPLICATION LOGIN", "$REPLICATION_PASSWORD", "host replication replicator all scram-sha-256"} {
		if !strings.Contains(scripts, want) {
			t.Errorf("initdb scripts lack %q", want)
		}
	}

}

func checkSingle(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if find(objs, "Service", postgresReadService) != nil {
		t.Errorf("Service %s rendered without standbys", postgresReadService)
	}
	if u := find(objs, "StatefulSet", v1alpha1.ComponentPostgres); u != nil {
		sts := convert[appsv1.StatefulSet](t, u)
		if ic := sts.Spec.Template.Spec.InitContainers; len(ic) != 0 {
			t.Errorf("a single postgres has init containers %v", ic)
		}
		if args := strings.Join(sts.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(args, "wal_keep_size") {
			t.Errorf("a single postgres keeps WAL for standbys it does not have: %s", args)
		}
		checkPrimaryReady(t, objs, sts.Spec.Template.Spec)
	}
	for _, u := range objs {
		if _, ok, _ := unstructured.NestedString(u.Object, "data", "POSTGRES_READ_HOST"); ok && u.GetKind() == "ConfigMap" {
			t.Errorf("ConfigMap %s has POSTGRES_READ_HOST without standbys", u.GetName())
		}
	}
}

// checkNoPasswordValue: no container of any workload is given a password as a value;
// every PASSWORD variable is a Secret reference.
func checkNoPasswordValue(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for id, tpl := range podTemplates(t, objs) {
		for _, c := range slices.Concat(tpl.Spec.InitContainers, tpl.Spec.Containers) {
			for _, e := range c.Env {
				if strings.Contains(e.Name, "PASSWORD") && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
					t.Errorf("%s container %s: %s is not a Secret reference", id, c.Name, e.Name)
				}
			}
		}
	}
}

// isSecretRef matches an environment variable named env read from key of the postgres Secret.
func isSecretRef(env, key string) func(corev1.EnvVar) bool {
	return func(e corev1.EnvVar) bool {
		return e.Name == env && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
			e.ValueFrom.SecretKeyRef.Name == v1alpha1.ComponentPostgres && e.ValueFrom.SecretKeyRef.Key == key
	}
}

// statefulPods are the labels of the n pods of sts, as its controller creates them:
// the template's labels and the pod-name label.
func statefulPods(sts *appsv1.StatefulSet, n int32) map[string]labels.Set {
	out := map[string]labels.Set{}
	for i := range n {
		name := fmt.Sprintf("%s-%d", sts.Name, i)
		l := labels.Set{"statefulset.kubernetes.io/pod-name": name}
		for k, v := range sts.Spec.Template.Labels {
			l[k] = v
		}
		out[name] = l
	}
	return out
}

// selected lists, sorted, the pods the Service name selects.
func selected(t *testing.T, objs []*unstructured.Unstructured, name string, pods map[string]labels.Set) []string {
	t.Helper()
	u := find(objs, "Service", name)
	if u == nil {
		t.Fatalf("Service %s not rendered", name)
	}
	svc := convert[corev1.Service](t, u)
	if len(svc.Spec.Selector) == 0 {
		t.Fatalf("Service %s has no selector", name)
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var out []string
	for pod, l := range pods {
		if sel.Matches(l) {
			out = append(out, pod)
		}
	}
	slices.Sort(out)
	return out
}

// postgresFailoverPatch is the stored patch the README's manual failover adds to point
// the postgres Service at a promoted standby.
const postgresFailoverPatch = `apiVersion: v1
kind: Service
metadata:
  name: postgres
spec:
  selector:
    statefulset.kubernetes.io/pod-name: postgres-1
`

// TestPostgresFailoverPatch: the README's failover step, a strategic-merge patch in
// spec.patches, moves the postgres Service to the promoted pod and to it alone, and
// leaves postgres-read on every pod.
func TestPostgresFailoverPatch(t *testing.T) {
	p, rel := production(t)
	n := postgresReplicas(p)
	if n < 2 {
		t.Fatalf("the production example runs %d postgres replicas; the failover needs a standby", n)
	}
	p.Spec.Patches = append(p.Spec.Patches, v1alpha1.Patch{Patch: postgresFailoverPatch})
	objs := mustRender(t, p, rel)
	pods := statefulPods(convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentPostgres)), n)
	if got := selected(t, objs, v1alpha1.ComponentPostgres, pods); !slices.Equal(got, []string{"postgres-1"}) {
		t.Errorf("after the failover patch, Service postgres selects %v, want [postgres-1]", got)
	}
	if got := selected(t, objs, postgresReadService, pods); len(got) != int(n) {
		t.Errorf("after the failover patch, Service %s selects %v, want all %d pods", postgresReadService, got, n)
	}
}

// TestPostgresScaleUpNeedsNoNewPrimary: scaling a single postgres up adds the standby
// parts only; the main container (command, environment, mounts) and volumes are those
// pod 0 already runs, apart from the WAL kept for standbys. The StatefulSet controller
// creates the new pods, and waits for them to be Ready, before it updates pod 0: a
// replication user that only the new template created would never come.
func TestPostgresScaleUpNeedsNoNewPrimary(t *testing.T) {
	for _, name := range []string{"example/minimal", "example/platform"} {
		t.Run(name, func(t *testing.T) {
			in := everyInput(t)[name]
			spec := func(n int32) corev1.PodSpec {
				p := in.p.DeepCopy()
				p.Spec.Infrastructure.Postgres.Replicas = ptr.To(n)
				return convert[appsv1.StatefulSet](t, find(mustRender(t, p, in.rel), "StatefulSet", v1alpha1.ComponentPostgres)).Spec.Template.Spec
			}
			one, three := spec(1), spec(3)
			c1, c3 := one.Containers[0], three.Containers[0]
			c1.Args, c3.Args = nil, nil
			if diff := cmp.Diff(c1, c3); diff != "" {
				t.Errorf("scaling up changes the postgres container beyond its args (-1 +3):\n%s", diff)
			}
			if diff := cmp.Diff(one.Volumes, three.Volumes); diff != "" {
				t.Errorf("scaling up changes the postgres volumes (-1 +3):\n%s", diff)
			}
		})
	}
}
