/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// tenantsFile writes one file holding a platform (examples/minimal.yaml, as
// platformFile writes it) in each namespace, with the spec lines specs[i] appended to
// the i-th.
func tenantsFile(t *testing.T, namespaces []string, specs ...string) string {
	t.Helper()
	data, err := os.ReadFile(example("minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for i, ns := range namespaces {
		// No minReadySeconds, as platformFile: kwok's pods are Ready at once.
		docs = append(docs, strings.Replace(string(data), "namespace: onto-dev", "namespace: "+ns, 1)+"  global:\n    minReadySeconds: 0\n"+specs[i])
	}
	path := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// quota is a spec.tenancy.resourceQuota of pods.
func quota(pods string) string {
	return "  tenancy:\n    resourceQuota:\n      pods: \"" + pods + "\"\n"
}

// TestCLIApplyManyPlatforms: one file of three small platforms in three namespaces,
// applied two at a time. The second's namespace holds a ServiceAccount of its rendered
// name that belongs to no platform: it is refused before any write, the other two
// become ready, each with its own first revision, and the run exits 1 naming it. With
// that ServiceAccount gone, a re-run converges, and a plan of the three finds nothing
// to change.
func TestCLIApplyManyPlatforms(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	namespaces := []string{c.Namespace(t), c.Namespace(t), c.Namespace(t)}
	kc := "--kubeconfig=" + c.Kubeconfig
	failed := namespaces[1] + "/onto-dev"
	foreign := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gateway"}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(namespaces[1]).Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := tenantsFile(t, namespaces, smallSpec, smallSpec, smallSpec)

	r := runCmd(t, "apply", "-f", file, "--parallel", "2", kc)
	if r.code != exitFailure || !strings.Contains(r.stderr, "error: 1 of 3 platforms failed: "+failed+"\n") {
		t.Fatalf("apply with one platform refused: exit %d, want 1 naming %s\nstdout:\n%s\nstderr:\n%s", r.code, failed, r.stdout, r.stderr)
	}
	// Each platform's progress is named, and so is the failed one's error.
	for _, i := range []int{0, 2} {
		if !strings.Contains(r.stderr, namespaces[i]+"/onto-dev [") {
			t.Errorf("no progress line names %s/onto-dev:\n%s", namespaces[i], r.stderr)
		}
	}
	if !strings.Contains(r.stderr, failed+" error: ") || !strings.Contains(r.stderr, "belongs to no platform") {
		t.Errorf("the refused platform's error is not printed with its name:\n%s", r.stderr)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[0]] = f[2]
	}
	want := map[string]string{namespaces[0]: "succeeded", namespaces[1]: "failed", namespaces[2]: "succeeded"}
	for ns, result := range want {
		if rows[ns] != result {
			t.Errorf("table: %s is %q, want %s\n%s", ns, rows[ns], result, r.stdout)
		}
	}
	for _, i := range []int{0, 2} {
		st := platformStatus(t, c, namespaces[i])
		if st.phase != "Running" || st.revisions != 1 || st.revision != 1 {
			t.Errorf("%s after the first run: %+v, want Running with its own revision 1", namespaces[i], st)
		}
	}

	if err := c.Kube.CoreV1().ServiceAccounts(namespaces[1]).Delete(t.Context(), "gateway", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "apply", "-f", file, "--parallel", "2", "-o", "json", kc)
	if r.code != 0 {
		t.Fatalf("apply after the fix: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var summary printers.FleetView
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil || !summary.Success || len(summary.Platforms) != 3 {
		t.Fatalf("apply -o json: last line %q (%v), want a successful summary of 3 platforms", lines[len(lines)-1], err)
	}
	for i, ns := range namespaces {
		if st := platformStatus(t, c, ns); st.phase != "Running" {
			t.Errorf("%s after the re-run: %+v, want Running", ns, st)
		}
		if p := summary.Platforms[i]; p.Namespace != ns || p.Result != "succeeded" || p.Status == nil || p.Status.Phase != "Running" {
			t.Errorf("summary row %d: %+v, want %s succeeded and Running", i, p, ns)
		}
	}

	r = runCmd(t, "plan", "-f", file, "-o", "json", "--detailed-exitcode", kc)
	if r.code != 0 {
		t.Fatalf("plan after convergence: exit %d (2: changes)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var plans printers.FleetView
	if err := json.Unmarshal([]byte(r.stdout), &plans); err != nil || !plans.Success || len(plans.Platforms) != 3 {
		t.Fatalf("plan -o json: %v\n%s", err, r.stdout)
	}
	for _, p := range plans.Platforms {
		if p.Changes != 0 || p.Plan == nil || p.Plan.HasChanges() {
			t.Errorf("plan of %s/%s: %d changes, want none", p.Namespace, p.Name, p.Changes)
		}
	}

	// The three plans share their lists: one LIST per kind across the namespaces,
	// not one per kind and platform (27 before); the CRD is read once, and the
	// platforms and their namespaces come from the shared lists too.
	r = runCmd(t, "plan", "-f", file, "-v", "6", kc)
	counts := bench.CountLogLines(strings.Split(r.stderr, "\n"))
	t.Logf("plan of 3 unchanged platforms: %s", counts)
	if r.code != 0 || counts[bench.VerbList] == 0 || counts[bench.VerbList] > 11 || counts[bench.VerbGet] > 1 {
		t.Errorf("plan of 3 unchanged platforms sent %s (exit %d); want at most one LIST per kind (11) and one GET (the CRD)", counts, r.code)
	}
}

// platformState is what the test reads of a platform's status.
type platformState struct {
	phase     string
	revision  int64
	revisions int
}

func platformStatus(t *testing.T, c *testcluster.Cluster, ns string) platformState {
	t.Helper()
	obj, err := c.Dynamic.Resource(platformGVR()).Namespace(ns).Get(t.Context(), "onto-dev", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get platform of %s: %v", ns, err)
	}
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	history, _, _ := unstructured.NestedSlice(obj.Object, "status", "history")
	st := platformState{phase: phase, revisions: len(history)}
	if len(history) > 0 {
		if h, ok := history[len(history)-1].(map[string]any); ok {
			st.revision, _, _ = unstructured.NestedInt64(h, "revision")
		}
	}
	return st
}

// TestCLIApplyManyFailFast: with --fail-fast, the first failure cancels the platforms
// running (their lock leases are released) and starts no more; the cancelled are
// reported as such and the run exits 1 naming the failed and the cancelled.
func TestCLIApplyManyFailFast(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	namespaces := []string{c.Namespace(t), c.Namespace(t), c.Namespace(t)}
	kc := "--kubeconfig=" + c.Kubeconfig
	// Two at a time: the first fails on its quota; the second waits for a postgres no
	// node has room for (--plane-timeout is long); the third waits for a slot, which
	// the failure's cancellation takes from it. The first fails within 0.1 s, sooner
	// than the second may print its first line, so the test holds the first's lock
	// until the second has written its StatefulSet: the second is running when the
	// first fails, by cause, not by a race (CI once saw the first fail first).
	held := &apply.Lock{Kube: c.Kube, Namespace: namespaces[0], Name: apply.LockName("onto-dev"), Holder: "test/holds-the-first", TTL: 5 * time.Minute, Now: time.Now}
	if err := held.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	unschedulable := strings.Replace(smallSpec, "    redis: {enabled: false}\n",
		"    redis: {enabled: false}\n    postgres: {resources: {requests: {cpu: \"1000\"}, limits: {cpu: \"1000\"}}}\n", 1)
	file := tenantsFile(t, namespaces, smallSpec+quota("0"), unschedulable, smallSpec)
	done := make(chan result, 1)
	go func() {
		done <- runCmd(t, "apply", "-f", file, "--parallel", "2", "--fail-fast", "--plane-timeout", "5m", "--lock-wait", "2m", kc)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := c.Kube.AppsV1().StatefulSets(namespaces[1]).Get(t.Context(), "postgres", metav1.GetOptions{})
		if err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("apply ended before the second platform wrote its postgres: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second platform's postgres StatefulSet is not there after a minute: %v", err)
		}
	}
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	cancelled := namespaces[1] + "/onto-dev, " + namespaces[2] + "/onto-dev"
	if r.code != exitFailure || !strings.Contains(r.stderr, "error: 1 of 3 platforms failed: "+namespaces[0]+"/onto-dev; 2 of 3 cancelled: "+cancelled+"\n") {
		t.Fatalf("apply --fail-fast: exit %d, want 1 naming the failed and the cancelled\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "cancelled: another platform failed (--fail-fast)"); n != 2 {
		t.Errorf("the table reports %d platforms cancelled by --fail-fast, want 2:\n%s", n, r.stdout)
	}
	if !strings.Contains(r.stderr, namespaces[1]+"/onto-dev [") || strings.Contains(r.stderr, namespaces[2]+"/onto-dev [") {
		t.Errorf("want the second platform started and the third not:\n%s", r.stderr)
	}
	for _, ns := range namespaces {
		if _, err := c.Kube.CoordinationV1().Leases(ns).Get(t.Context(), apply.LockName("onto-dev"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the lock lease of %s after the run: %v, want it released", ns, err)
		}
	}
}

// TestCLIPlanManyPlatformsPerNamespaceRBAC: an identity whose Roles grant the rendered
// kinds in the platforms' namespaces only (as a team per tenant has) plans them from a
// directory: each cluster-wide LIST is refused once and the kind is listed in each
// namespace instead, and the unchanged-object proof still finds nothing to change.
func TestCLIPlanManyPlatformsPerNamespaceRBAC(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	namespaces := []string{c.Namespace(t), c.Namespace(t)}
	kc := "--kubeconfig=" + c.Kubeconfig
	file := tenantsFile(t, namespaces, smallSpec, smallSpec)
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 {
		t.Fatalf("apply as admin: exit %d\n%s", r.code, r.stderr)
	}

	user := "planner-" + namespaces[0]
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	read := []string{"get", "list", "patch"} // patch: the server-side dry runs
	for _, ns := range namespaces {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: read}}}
		if _, err := c.Kube.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user}}
		if _, err := c.Kube.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cluster := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}},
	}}
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(t.Context(), cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clusterBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user}}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(t.Context(), clusterBinding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = c.Kube.RbacV1().ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})

	r := runCmd(t, "plan", "-f", file, "--detailed-exitcode", "--as", user, "-v", "6", kc)
	if r.code != 0 {
		t.Fatalf("plan as %s: exit %d (2: changes), want 0\nstdout:\n%s\nstderr:\n%s", user, r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(r.stderr, "\n")
	var refused, perNamespace int
	for _, line := range lines {
		// -v 6 logs each response: msg=Response verb="GET" url="…" status="200 OK"
		if !strings.Contains(line, "msg=Response") {
			continue
		}
		if strings.Contains(line, "?labelSelector=") && strings.Contains(line, `status="403`) {
			refused++ // a label-selected list across the cluster
			continue
		}
		for _, ns := range namespaces {
			// A list in the namespace: a resource after it, no name.
			_, rest, ok := strings.Cut(line, "/namespaces/"+ns+"/")
			if resource, _, _ := strings.Cut(rest, `"`); ok && !strings.Contains(strings.Split(resource, "?")[0], "/") {
				perNamespace++
			}
		}
	}
	counts := bench.CountLogLines(lines)
	t.Logf("plan of 2 platforms as a per-namespace identity: %s; %d cluster-wide lists refused, %d lists in a namespace", counts, refused, perNamespace)
	// Each refused kind is listed in both namespaces (the OntoPlatforms are read by
	// GET instead): at least as many lists in a namespace as refused cluster-wide.
	if refused == 0 || perNamespace < refused {
		t.Errorf("plan as %s: %d cluster-wide LISTs refused and %d listed per namespace; want the refused kinds listed in each namespace", user, refused, perNamespace)
	}
}
