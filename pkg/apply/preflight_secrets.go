/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"fmt"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// MissingSecretsError is returned before any write when a Secret the spec names for
// an external service does not exist in the platform's namespace or lacks a key the
// pods read: they would not start, and a plane would wait for them until it timed out.
// It names Secrets and keys, never a value.
type MissingSecretsError struct {
	Namespace string
	Missing   []plan.MissingSecret
}

func (e *MissingSecretsError) Error() string {
	var b strings.Builder
	b.WriteString("a Secret the platform's services read is missing; nothing was written:")
	for _, m := range e.Missing {
		fmt.Fprintf(&b, "\n  %s", m)
	}
	fmt.Fprintf(&b, "\ncreate them in namespace %s with those keys (kubectl -n %[1]s create secret generic NAME --from-literal=KEY=...), then apply again", e.Namespace)
	return b.String()
}

// CheckSecrets refuses a plan, made now, with missing user Secrets. It is not part of
// Preflight: a saved plan is applied as reviewed, and a Secret missing when it was
// saved may exist now; what counts is the plan made by this run.
func CheckSecrets(p *plan.Plan) error {
	if len(p.MissingSecrets) == 0 {
		return nil
	}
	return &MissingSecretsError{Namespace: p.Platform.Namespace, Missing: p.MissingSecrets}
}
