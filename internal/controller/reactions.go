/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"context"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// react handles the platform's failing pods (crash loops, evictions, pods on a lost
// node) once per pass, before the platform itself is reconciled. Its errors are
// logged, never returned: a reaction that cannot run must not stop the repair of the
// platform.
func (r *Reconciler) react(ctx context.Context, p *v1alpha1.OntoPlatform) {}
