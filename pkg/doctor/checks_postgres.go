/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
)

// CodePostgresPrimary names a replicated Postgres whose primary is down: nothing
// promotes a standby by itself, so writes fail until someone fails over by hand.
const CodePostgresPrimary = "ONTO-WRK-209"

// podNameLabel is the label the StatefulSet controller sets on each of its pods, which
// the postgres Service selects its primary by.
const podNameLabel = "statefulset.kubernetes.io/pod-name"

func checkPostgresPrimary(env *Env) []Finding {
	primary := postgresPrimary(env)
	if primary == "" {
		return nil
	}
	var pod *corev1.Pod
	for i := range env.Pods {
		if env.Pods[i].Name == primary {
			pod = &env.Pods[i]
		}
	}
	var why string
	switch {
	case pod == nil:
		why = "the pod does not exist"
	case pod.DeletionTimestamp != nil:
		why = "the pod is terminating"
	case !health.PodReady(pod):
		var problems []string
		for _, p := range health.PodProblems(pod) {
			problems = append(problems, p.String())
		}
		why = "phase " + string(pod.Status.Phase)
		if len(problems) > 0 {
			why = strings.Join(problems, "; ")
		}
	default:
		return nil
	}
	return []Finding{{Object: "pod/" + primary,
		Evidence: fmt.Sprintf("postgres primary %s is not ready; writes fail: %s", primary, why),
		Fix: fmt.Sprintf("the pod findings say why %s is down; if it will not come back, promote a standby and point the postgres Service at it (see %s/postgres-failover.md)",
			primary, buildinfo.DocsURL)}}
}

// skipPostgresPrimary applies the check to an installed platform whose rendered
// postgres Service pins one pod: a replicated Postgres.
func skipPostgresPrimary(env *Env) string {
	if why := needsPlatform(env); why != "" {
		return why
	}
	if env.Desired == nil {
		return "no desired state to tell the primary"
	}
	if postgresPrimary(env) == "" {
		return "postgres runs no standbys"
	}
	return ""
}

// postgresPrimary is the pod the rendered postgres Service sends writes to, "" when it
// pins none (a single postgres, or none). The rendered Service includes the platform's
// stored patches, so after a manual failover it names the promoted pod.
func postgresPrimary(env *Env) string {
	for _, u := range env.Rendered() {
		if u.GetKind() == "Service" && u.GetName() == v1alpha1.ComponentPostgres {
			pod, _, _ := unstructured.NestedString(u.Object, "spec", "selector", podNameLabel)
			return pod
		}
	}
	return ""
}
