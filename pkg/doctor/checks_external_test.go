/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

func TestExternalSecretsCheck(t *testing.T) {
	db := plan.UserSecret{Name: "onto-db", Field: "spec.infrastructure.postgres.external.credentialsSecretRef",
		Keys: []string{"password", "username"}, UsedBy: []string{"deployment/auth-service"}}
	withSecrets := func(missing ...plan.MissingSecret) func(e *Env) {
		return func(e *Env) {
			e.Desired = &plan.Desired{Namespace: testNamespace, Version: "1.5.0", UserSecrets: []plan.UserSecret{db}}
			e.Plan = &plan.Plan{Version: "1.5.0", MissingSecrets: missing}
		}
	}
	runCases(t, []checkCase{
		{name: "no desired state", code: CodeExternalSecrets, skip: "no desired state"},
		{name: "no external service", code: CodeExternalSecrets, setup: func(e *Env) {
			e.Desired = &plan.Desired{Namespace: testNamespace, Version: "1.5.0"}
		}, skip: "no external service names a credentials Secret"},
		{name: "not planned", code: CodeExternalSecrets, setup: func(e *Env) {
			withSecrets()(e)
			e.Plan = nil
		}, skip: "could not be planned (ONTO-PLT-104)"},
		{name: "present with every key", code: CodeExternalSecrets, setup: withSecrets()},
		{name: "missing, and lacking a key", code: CodeExternalSecrets, setup: withSecrets(
			plan.MissingSecret{UserSecret: db, Missing: db.Keys},
			plan.MissingSecret{UserSecret: db, Exists: true, Missing: []string{"password"}}),
			want: []wantFinding{
				{severity: SeverityError, object: "secret/onto-db",
					evidence: []string{"does not exist", "spec.infrastructure.postgres.external.credentialsSecretRef", "deployment/auth-service read its keys password, username"},
					fix:      []string{"kubectl -n onto-system create secret generic onto-db --from-literal=password=... --from-literal=username=...", "kubectl onto apply"}},
				{severity: SeverityError, object: "secret/onto-db",
					evidence: []string{"has no key password"},
					fix:      []string{"add the keys to Secret onto-system/onto-db"}},
			}},
	})
}
