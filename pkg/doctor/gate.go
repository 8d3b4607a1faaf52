/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// Gate runs every check on platform namespace/name and fails when one finds an error,
// naming each such finding: a fleet's wave passes only when doctor finds no error on
// its clusters. warnings counts the warning findings of a gate that passed.
func Gate(ctx context.Context, clients *kube.Clients, namespace, name string) (warnings int, err error) {
	g := &Gatherer{Clients: clients, Settings: DefaultSettings()}
	env, err := g.Gather(ctx, namespace, name)
	if err != nil {
		return 0, fmt.Errorf("doctor %s/%s: %w", namespace, name, err)
	}
	report := Evaluate(env, Select(All(), false, nil, nil), false)
	var errs []string
	for _, f := range report.Findings() {
		if f.Severity == SeverityError {
			errs = append(errs, fmt.Sprintf("%s %s: %s", f.Code, f.Object, f.Evidence))
		}
	}
	if len(errs) > 0 {
		return 0, fmt.Errorf("doctor found %d error(s) on %s/%s (kubectl onto doctor %s -n %s): %s", len(errs), namespace, name, name, namespace, strings.Join(errs, "; "))
	}
	return report.Counts()[SeverityWarning], nil
}
