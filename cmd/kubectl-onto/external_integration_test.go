/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// externalPostgresSpec is smallSpec with postgres external, at a host that does not
// resolve: the platform never connects to it in the test cluster (kwok's pods run no
// process), so the address only has to reach the services' configuration.
var externalPostgresSpec = strings.Replace(smallSpec, "  infrastructure:\n", `  infrastructure:
    postgres:
      external:
        host: db.example.invalid
        port: 6432
        tls: true
        credentialsSecretRef: {name: onto-db}
`, 1)

// TestCLIExternalPostgres: with postgres external, apply refuses, writing
// nothing, while the Secret it names is missing or lacks a key, and says which; once
// the Secret is whole, apply installs the platform with no postgres workload, Service
// or generated Secret, and the services that use postgres are configured with the
// given host, port and TLS setting and read the user's Secret. No value is printed.
func TestCLIExternalPostgres(t *testing.T) {
	c := testcluster.New(t)
	ns := c.Namespace(t)
	kc := "--kubeconfig=" + c.Kubeconfig
	file := platformFile(t, ns, externalPostgresSpec)

	r := runCmd(t, "apply", "-f", file, kc)
	for _, want := range []string{"Secret onto-db", "does not exist", "spec.infrastructure.postgres.external.credentialsSecretRef", "password, username", "nothing was written"} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Fatalf("apply without the Secret: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	assertNothingWritten(t, c, ns)
	if r := runCmd(t, "plan", "-f", file, kc); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "Secret onto-db") {
		t.Fatalf("plan without the Secret: exit %d; want 0 with a warning naming it:\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	const username, password = "onto-external-user", "s3cr3t-external-password"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "onto-db", Namespace: ns}, Data: map[string][]byte{"username": []byte(username)}}
	if _, err := c.Kube.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "apply", "-f", file, kc)
	if r.code != 1 || !strings.Contains(r.stderr, "has no key password") {
		t.Fatalf("apply with a Secret lacking password: exit %d; want 1 naming the key:\n%s", r.code, r.stderr)
	}
	assertNothingWritten(t, c, ns)

	secret.Data["password"] = []byte(password)
	if _, err := c.Kube.CoreV1().Secrets(ns).Update(t.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "apply", "-f", file, kc)
	if r.code != 0 {
		t.Fatalf("apply with the Secret: exit %d:\n%s", r.code, r.stderr)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, password) || strings.Contains(out, username) {
			t.Fatalf("apply printed a value of the user's Secret:\n%s", out)
		}
	}

	if _, err := c.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), v1alpha1.ComponentPostgres, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("StatefulSet postgres of an external postgres: %v, want NotFound", err)
	}
	if _, err := c.Kube.CoreV1().Services(ns).Get(t.Context(), v1alpha1.ComponentPostgres, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service postgres of an external postgres: %v, want NotFound", err)
	}
	if _, err := c.Kube.CoreV1().Secrets(ns).Get(t.Context(), v1alpha1.ComponentPostgres, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("generated Secret postgres of an external postgres: %v, want NotFound", err)
	}

	// Every service of the small platform but the gateway uses postgres.
	for _, name := range []string{v1alpha1.ComponentOntologyService, v1alpha1.ComponentDataService, v1alpha1.ComponentNessie} {
		dep, err := c.Kube.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		main := dep.Spec.Template.Spec.Containers[0]
		var config string
		for _, ef := range main.EnvFrom {
			if ef.ConfigMapRef != nil {
				config = ef.ConfigMapRef.Name
			}
		}
		cm, err := c.Kube.CoreV1().ConfigMaps(ns).Get(t.Context(), config, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s's ConfigMap %q: %v", name, config, err)
		}
		for k, want := range map[string]string{"POSTGRES_HOST": "db.example.invalid", "POSTGRES_PORT": "6432", "POSTGRES_SSLMODE": "require"} {
			if got := cm.Data[k]; got != want {
				t.Errorf("%s: %s = %q, want %q", name, k, got, want)
			}
		}
		refs := map[string]string{}
		for _, e := range main.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			}
		}
		if refs["POSTGRES_USER"] != "onto-db/username" || refs["POSTGRES_PASSWORD"] != "onto-db/password" {
			t.Errorf("%s: credentials from %v, want POSTGRES_USER onto-db/username and POSTGRES_PASSWORD onto-db/password", name, refs)
		}
	}

	// status counts the four deployed components, not the external one. (The
	// namespace, named after the test, holds "postgres": look for the table's cell.)
	r = runCmd(t, "status", "-n", ns, kc)
	if r.code != 0 || strings.Contains(r.stdout, " "+v1alpha1.ComponentPostgres+" ") {
		t.Fatalf("status: exit %d; want 0 without postgres:\n%s", r.code, r.stdout)
	}
	if r := runCmd(t, "apply", "-f", file, kc); r.code != 0 || !strings.Contains(r.stderr+r.stdout, "nothing to write") {
		t.Fatalf("second apply: exit %d; want nothing to write:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// assertNothingWritten: a refused apply left no workload and no configuration of the
// platform in ns.
func assertNothingWritten(t *testing.T, c *testcluster.Cluster, ns string) {
	t.Helper()
	deps, err := c.Kube.AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := c.Kube.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{LabelSelector: v1alpha1.LabelManagedBy + "=kubectl-onto"})
	if err != nil {
		t.Fatal(err)
	}
	if len(deps.Items) != 0 || len(cms.Items) != 0 {
		t.Fatalf("a refused apply wrote %d Deployments and %d ConfigMaps", len(deps.Items), len(cms.Items))
	}
}
