/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"errors"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

func TestCheckSecrets(t *testing.T) {
	p := &plan.Plan{Platform: plan.ObjectRef{Namespace: "onto-ext", Name: "onto-ext"}}
	if err := CheckSecrets(p); err != nil {
		t.Fatalf("a plan without missing Secrets: %v", err)
	}
	us := plan.UserSecret{Name: "onto-s3", Field: "spec.infrastructure.minio.external.credentialsSecretRef",
		Keys: []string{"accessKey", "secretKey"}, UsedBy: []string{"deployment/nessie"}}
	p.MissingSecrets = []plan.MissingSecret{{UserSecret: us, Exists: true, Missing: []string{"secretKey"}}}
	err := CheckSecrets(p)
	var missing *MissingSecretsError
	if !errors.As(err, &missing) {
		t.Fatalf("error %T %v, want *MissingSecretsError", err, err)
	}
	for _, want := range []string{"nothing was written", "Secret onto-s3, named by spec.infrastructure.minio.external.credentialsSecretRef, has no key secretKey; deployment/nessie read it", "namespace onto-ext"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
