/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// Codes of the platform checks.
const (
	CodeCRD        = "ONTO-PLT-101"
	CodeConditions = "ONTO-PLT-102"
	CodeStuckWork  = "ONTO-PLT-103"
	CodeDrift      = "ONTO-PLT-104"
	// CodeExternalSecrets reads the drift plan's user Secrets (ONTO-PLT-104's plan).
	CodeExternalSecrets = "ONTO-PLT-105"
)

// maxDriftFields bounds the fields listed per drifted object; the plan shows them all.
const maxDriftFields = 5

func platformChecks() []Check {
	return []Check{
		{Code: CodeCRD, Category: CategoryPlatform, Description: "OntoPlatform CRD installed and served", Run: checkCRD},
		{Code: CodeConditions, Category: CategoryPlatform, Description: "platform conditions", Skip: needsPlatform, Run: checkConditions},
		{Code: CodeStuckWork, Category: CategoryPlatform, Description: "no stopped upgrade or stuck lock", Skip: needsPlatform, Run: checkStuckWork},
		{Code: CodeDrift, Category: CategoryPlatform, Description: "live objects match the applied spec", Skip: skipDrift, Run: checkDrift},
		{Code: CodeExternalSecrets, Category: CategoryPlatform, Description: "external services' credentials Secrets present with their keys", Skip: skipExternalSecrets, Run: checkExternalSecrets},
	}
}

func needsPlatform(env *Env) string {
	if env.Platform == nil {
		return "no installed platform"
	}
	return ""
}

// platformObject is how findings name the OntoPlatform.
func platformObject(env *Env) string {
	if env.Platform == nil {
		return ""
	}
	return "ontoplatform/" + env.Platform.Name
}

func checkCRD(env *Env) []Finding {
	if env.CRD == nil {
		return []Finding{{Object: "customresourcedefinition/" + v1alpha1.CRDName,
			Evidence: "the CRD is not installed",
			Fix:      "kubectl onto apply -f platform.yaml installs it with the platform"}}
	}
	versions, _, _ := unstructured.NestedSlice(env.CRD.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if m["name"] == v1alpha1.GroupVersion.Version {
			if served, _ := m["served"].(bool); served {
				return established(env.CRD)
			}
		}
	}
	return []Finding{{Object: "customresourcedefinition/" + v1alpha1.CRDName,
		Evidence: fmt.Sprintf("version %s is not served by the installed CRD", v1alpha1.GroupVersion.Version),
		Fix:      "kubectl onto apply -f platform.yaml updates the CRD to this binary's"}}
}

// established reports a CRD the API server has not accepted (names conflict, not yet
// established).
func established(crd *unstructured.Unstructured) []Finding {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] != "True" {
			return []Finding{{Object: "customresourcedefinition/" + crd.GetName(),
				Evidence: fmt.Sprintf("Established=%v: %v", m["status"], m["message"])}}
		}
	}
	return nil
}

func checkConditions(env *Env) []Finding {
	p := env.Platform
	obj := platformObject(env)
	var out []Finding
	for _, c := range p.Status.Conditions {
		switch {
		case c.Type == v1alpha1.ConditionReady && c.Status == "False" && !p.Status.InFlight():
			// While a run is in flight Ready is False by definition (kstatus's
			// Reconciling); checkStuckWork judges whether that run still runs.
			out = append(out, Finding{Object: obj, Evidence: fmt.Sprintf("Ready=False since %s: %s: %s", age(env.Now, c.LastTransitionTime.Time), c.Reason, c.Message),
				Fix: "see the workload findings below; kubectl onto apply -f platform.yaml once fixed"})
		case c.Type == v1alpha1.ConditionDegraded && c.Status == "True":
			out = append(out, Finding{Object: obj, Evidence: fmt.Sprintf("Degraded=True since %s: %s: %s", age(env.Now, c.LastTransitionTime.Time), c.Reason, c.Message),
				Fix: "see the workload findings below"})
		}
	}
	if p.Status.ObservedGeneration > 0 && p.Status.ObservedGeneration < p.Generation {
		out = append(out, Finding{Severity: SeverityWarning, Object: obj,
			Evidence: fmt.Sprintf("the spec changed after the last run (generation %d, observed %d)", p.Generation, p.Status.ObservedGeneration),
			Fix:      "kubectl onto apply -f platform.yaml"})
	}
	if r := env.Status; r != nil && !r.Ready && len(out) == 0 {
		recorded := "the last run recorded no Ready condition"
		if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); c != nil {
			recorded = fmt.Sprintf("the last run recorded Ready=%s", c.Status)
		}
		out = append(out, Finding{Severity: SeverityWarning, Object: obj,
			Evidence: fmt.Sprintf("%s; live, %s components are ready", recorded, r.ReadyComponents),
			Fix:      "see the workload findings below"})
	}
	return out
}

func checkStuckWork(env *Env) []Finding {
	p := env.Platform
	var out []Finding
	held, holder, since := leaseState(env)
	if u := p.Status.Upgrade; u != nil && !held {
		action := u.Action
		if action == "" {
			action = "upgrade"
		}
		what := fmt.Sprintf("%s %s → %s stopped", action, u.From, u.To)
		if u.Current != "" {
			what += fmt.Sprintf(" at %s (%s)", u.Current, u.Step)
		}
		if u.FailedComponent != "" {
			what += fmt.Sprintf("; %s failed", u.FailedComponent)
		}
		if u.Message != "" {
			what += ": " + u.Message
		}
		out = append(out, Finding{Object: platformObject(env), Evidence: what,
			Fix: fmt.Sprintf("resume with kubectl onto upgrade %s -n %s --to %s, or undo it with kubectl onto rollback %s -n %s", p.Name, p.Namespace, u.To, p.Name, p.Namespace)})
	}
	if env.Lease != nil {
		lease := "lease/" + env.Lease.Name
		switch {
		case held && env.Now.Sub(since) > env.LeaseStuck:
			out = append(out, Finding{Severity: SeverityWarning, Object: lease,
				Evidence: fmt.Sprintf("held by %s for %s", holder, age(env.Now, since)),
				Fix:      fmt.Sprintf("if that run is gone, kubectl onto unlock %s -n %s", p.Name, p.Namespace)})
		case held:
			out = append(out, Finding{Severity: SeverityInfo, Object: lease,
				Evidence: fmt.Sprintf("a run holds it: %s, for %s", holder, age(env.Now, since))})
		default:
			out = append(out, Finding{Severity: SeverityInfo, Object: lease,
				Evidence: fmt.Sprintf("expired lease of %s, left by a run that stopped", holder),
				Fix:      "nothing to do: the next run takes it over"})
		}
	}
	return out
}

// leaseState says whether the lock lease is live (renewed within its duration), by whom
// and since when it is held.
func leaseState(env *Env) (held bool, holder string, since time.Time) {
	l := env.Lease
	if l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return false, "", time.Time{}
	}
	holder = *l.Spec.HolderIdentity
	if l.Spec.AcquireTime != nil {
		since = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
		held = env.Now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
	}
	return held, holder, since
}

func skipDrift(env *Env) string {
	switch {
	case env.Platform == nil:
		return "no installed platform"
	case env.Platform.Status.Upgrade != nil:
		return "an upgrade is stopped or running (" + CodeStuckWork + "): components are between versions"
	case env.Desired == nil:
		return "no revision snapshot of the applied spec; run doctor -f platform.yaml to compare with the file"
	}
	return ""
}

func checkDrift(env *Env) []Finding {
	if env.Plan == nil {
		return []Finding{{Object: platformObject(env), Evidence: "cannot plan " + env.DesiredSource + ": " + env.PlanError}}
	}
	var out []Finding
	for _, pl := range env.Plan.Planes {
		if pl.Name == plan.PlatformPlane {
			// The CRD follows this binary and the OntoPlatform object the file or the
			// snapshot's metadata; neither is the platform's running state.
			continue
		}
		for _, ch := range pl.Changes {
			if ch.Action == plan.ActionUnchanged {
				continue
			}
			out = append(out, Finding{Object: objectName(ch.Object.Kind, ch.Object.Name),
				Evidence: driftEvidence(ch),
				Fix:      fmt.Sprintf("kubectl onto apply (%s) restores it; kubectl onto plan shows every field", env.DesiredSource)})
		}
	}
	return out
}

func driftEvidence(ch plan.Change) string {
	switch ch.Action {
	case plan.ActionCreate:
		return "missing: the applied spec has it, the cluster does not"
	case plan.ActionDelete:
		return "left over: the applied spec no longer has it"
	}
	var parts []string
	for i, f := range ch.Fields {
		if i == maxDriftFields {
			parts = append(parts, fmt.Sprintf("and %d more", len(ch.Fields)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %s, applied %s", f.Path, show(f.Old), show(f.New)))
	}
	for _, c := range ch.Conflicts {
		parts = append(parts, fmt.Sprintf("%s now owned by %s", c.Field, c.Manager))
	}
	if len(parts) == 0 {
		return string(ch.Action)
	}
	return string(ch.Action) + ": " + strings.Join(parts, "; ")
}

func show(v any) string {
	if v == nil {
		return "(none)"
	}
	return fmt.Sprint(v)
}

// objectName is kind/name, lowercase kind as kubectl prints it.
func objectName(kind, name string) string {
	return strings.ToLower(kind) + "/" + name
}

// age is how long ago t was, rounded for reading: 3m, 2h5m, 4d.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "an unknown time"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func skipExternalSecrets(env *Env) string {
	switch {
	case env.Desired == nil:
		return "no desired state (revision snapshot or -f file)"
	case len(env.Desired.UserSecrets) == 0:
		return "no external service names a credentials Secret"
	case env.Plan == nil:
		return "the platform could not be planned (" + CodeDrift + ")"
	}
	return ""
}

// checkExternalSecrets: each Secret an external service's credentialsSecretRef names
// exists with the keys the services read; otherwise their pods do not start and
// apply refuses to write.
func checkExternalSecrets(env *Env) []Finding {
	var out []Finding
	for _, m := range env.Plan.MissingSecrets {
		out = append(out, Finding{Object: objectName("Secret", m.Name), Evidence: m.String(),
			Fix: m.Fix(env.Namespace) + ", then kubectl onto apply"})
	}
	return out
}
