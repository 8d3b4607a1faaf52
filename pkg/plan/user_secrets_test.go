/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// TestUserSecrets: the Secrets of examples/external.yaml's external services are the
// desired state's user Secrets, each with the field that names it, the keys the
// rendered pods read (render's default key names) and the workloads that read them.
func TestUserSecrets(t *testing.T) {
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := v.LoadFile(filepath.Join("..", "..", "examples", "external.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := catalog.Get(ps[0].Spec.Version)
	if err != nil {
		t.Fatal(err)
	}
	planes, err := render.Render(ps[0], render.Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDesired(ps[0], planes)
	if err != nil {
		t.Fatal(err)
	}
	want := []UserSecret{
		{Name: "onto-db", Field: "spec.infrastructure.postgres.external.credentialsSecretRef", Keys: []string{"password", "username"},
			UsedBy: []string{"deployment/agent-runtime", "deployment/auth-service", "deployment/data-service", "deployment/nessie", "deployment/ontology-service", "deployment/schema-registry"}},
		{Name: "onto-s3", Field: "spec.infrastructure.minio.external.credentialsSecretRef", Keys: []string{"accessKey", "secretKey"},
			UsedBy: []string{"deployment/data-service", "deployment/nessie", "deployment/reasoning-service"}},
	}
	if diff := cmp.Diff(want, d.UserSecrets); diff != "" {
		t.Errorf("user Secrets (-want +got):\n%s", diff)
	}

	ps[0].Spec.Infrastructure.Postgres.External = nil
	ps[0].Spec.Infrastructure.Minio.External = nil
	planes, err = render.Render(ps[0], render.Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	if d, err = NewDesired(ps[0], planes); err != nil {
		t.Fatal(err)
	}
	if len(d.UserSecrets) != 0 {
		t.Errorf("without external services: user Secrets %v; the platform's own are generated", d.UserSecrets)
	}
}

func TestMissingSecretWarnings(t *testing.T) {
	used := UserSecret{Name: "onto-db", Field: "spec.infrastructure.postgres.external.credentialsSecretRef",
		Keys: []string{"password", "username"}, UsedBy: []string{"deployment/auth-service", "deployment/nessie"}}
	got := missingSecretWarnings("onto-ext", []MissingSecret{
		{UserSecret: used, Missing: used.Keys},
		{UserSecret: used, Exists: true, Missing: []string{"password"}},
	})
	want := []string{
		"Secret onto-db, named by spec.infrastructure.postgres.external.credentialsSecretRef, does not exist; deployment/auth-service, deployment/nessie read its keys password, username: " +
			"kubectl -n onto-ext create secret generic onto-db --from-literal=password=... --from-literal=username=...; apply writes nothing until then",
		"Secret onto-db, named by spec.infrastructure.postgres.external.credentialsSecretRef, has no key password; deployment/auth-service, deployment/nessie read it: " +
			"add the keys to Secret onto-ext/onto-db; apply writes nothing until then",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
