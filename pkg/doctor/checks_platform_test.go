/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

const crdObject = "customresourcedefinition/" + v1alpha1.CRDName

// testCRD is the OntoPlatform CRD with the given versions and Established status.
func testCRD(established string, versions ...map[string]any) *unstructured.Unstructured {
	vs := make([]any, len(versions))
	for i, v := range versions {
		vs[i] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": v1alpha1.CRDName},
		"spec":     map[string]any{"versions": vs},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "NamesAccepted", "status": "True"},
			map[string]any{"type": "Established", "status": established, "reason": "NotAccepted", "message": "the name conflicts with another CRD"},
		}},
	}}
}

func crdVersion(name string, served bool) map[string]any {
	return map[string]any{"name": name, "served": served, "storage": served}
}

func TestCRDCheck(t *testing.T) {
	runCases(t, []checkCase{
		{name: "installed and established, before an install", code: CodeCRD,
			setup: func(e *Env) { e.Platform = nil; e.CRD = testCRD("True", crdVersion("v1alpha1", true)) }},
		{name: "missing", code: CodeCRD, setup: func(e *Env) { e.Platform = nil },
			want: []wantFinding{{severity: SeverityError, object: crdObject,
				evidence: []string{"the CRD is not installed"}, fix: []string{"kubectl onto apply -f platform.yaml installs it"}}}},
		{name: "v1alpha1 not served", code: CodeCRD,
			setup: func(e *Env) { e.CRD = testCRD("True", crdVersion("v1alpha1", false), crdVersion("v1beta1", true)) },
			want: []wantFinding{{severity: SeverityError, object: crdObject,
				evidence: []string{"version v1alpha1 is not served by the installed CRD"}, fix: []string{"updates the CRD to this binary's"}}}},
		{name: "no v1alpha1 at all", code: CodeCRD,
			setup: func(e *Env) { e.CRD = testCRD("True", crdVersion("v1beta1", true)) },
			want:  []wantFinding{{severity: SeverityError, object: crdObject, evidence: []string{"version v1alpha1 is not served"}}}},
		{name: "not established", code: CodeCRD,
			setup: func(e *Env) { e.CRD = testCRD("False", crdVersion("v1alpha1", true)) },
			want: []wantFinding{{severity: SeverityError, object: crdObject,
				evidence: []string{"Established=False: the name conflicts with another CRD"}, noFix: true}}},
	})
}

func condition(typ string, st metav1.ConditionStatus, reason, msg string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg, LastTransitionTime: ago(since)}
}

func TestConditionsCheck(t *testing.T) {
	const obj = "ontoplatform/onto"
	readyTrue := condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonComponentsReady, "", time.Hour)
	runCases(t, []checkCase{
		{name: "no platform", code: CodeConditions, setup: func(e *Env) { e.Platform = nil }, skip: "no installed platform"},
		{name: "healthy", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Status.Conditions = []metav1.Condition{readyTrue,
				condition(v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonComponentsReady, "", time.Hour)}
			e.Status = &status.Report{Ready: true, ReadyComponents: "12/12"}
		}},
		{name: "Ready=False", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Status.Conditions = []metav1.Condition{
				condition(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonComponentsFailed, "gateway: 0/2 ready", 10*time.Minute)}
			e.Status = &status.Report{Ready: false, ReadyComponents: "11/12"}
		}, want: []wantFinding{{severity: SeverityError, object: obj,
			evidence: []string{"Ready=False since 10m: ComponentsNotReady: gateway: 0/2 ready"},
			fix:      []string{"kubectl onto apply -f platform.yaml"}}}},
		{name: "Degraded=True", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Status.Conditions = []metav1.Condition{readyTrue,
				condition(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonUpgradeFailed, "canary of gateway not ready", 2*time.Hour+5*time.Minute)}
		}, want: []wantFinding{{severity: SeverityError, object: obj,
			evidence: []string{"Degraded=True since 2h5m: UpgradeFailed: canary of gateway not ready"},
			fix:      []string{"workload findings"}}}},
		{name: "spec changed after the last run", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Generation, e.Platform.Status.ObservedGeneration = 5, 4
			e.Platform.Status.Conditions = []metav1.Condition{readyTrue}
		}, want: []wantFinding{{severity: SeverityWarning, object: obj,
			evidence: []string{"generation 5, observed 4"}, fix: []string{"kubectl onto apply -f platform.yaml"}}}},
		{name: "never applied: no observed generation", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Generation, e.Platform.Status.ObservedGeneration = 1, 0
		}},
		{name: "recorded ready, not ready live", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Status.Conditions = []metav1.Condition{readyTrue}
			e.Status = &status.Report{Ready: false, ReadyComponents: "11/12"}
		}, want: []wantFinding{{severity: SeverityWarning, object: obj,
			evidence: []string{"recorded Ready=True", "11/12 components are ready"}, fix: []string{"workload findings"}}}},
		{name: "Ready=False and not ready live: one finding", code: CodeConditions, setup: func(e *Env) {
			e.Platform.Status.Conditions = []metav1.Condition{
				condition(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonComponentsFailed, "gateway", time.Minute)}
			e.Status = &status.Report{Ready: false, ReadyComponents: "11/12"}
		}, want: []wantFinding{{severity: SeverityError, object: obj, evidence: []string{"Ready=False"}}}},
	})
}

// testLease is the lock lease of platform onto held by holder since acquired, last
// renewed at renewed, for 60s.
func testLease(holder string, acquired, renewed time.Duration) *coordinationv1.Lease {
	a, r := metav1.NewMicroTime(fixedNow.Add(-acquired)), metav1.NewMicroTime(fixedNow.Add(-renewed))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: apply.LockName("onto"), Namespace: testNamespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(60)),
			AcquireTime: &a, RenewTime: &r},
	}
}

func stoppedUpgrade() *v1alpha1.UpgradeStatus {
	return &v1alpha1.UpgradeStatus{From: "1.4.0", To: "1.5.0", Current: "gateway", Step: v1alpha1.StepCanary,
		FailedComponent: "gateway", Message: "canary not ready within 5m"}
}

func TestStuckWorkCheck(t *testing.T) {
	lease := "lease/" + apply.LockName("onto")
	stopped := wantFinding{severity: SeverityError, object: "ontoplatform/onto",
		evidence: []string{"upgrade 1.4.0 → 1.5.0 stopped at gateway (Canary); gateway failed: canary not ready within 5m"},
		fix:      []string{"kubectl onto upgrade onto -n onto-system --to 1.5.0", "kubectl onto rollback onto -n onto-system"}}
	runCases(t, []checkCase{
		{name: "no platform", code: CodeStuckWork, setup: func(e *Env) { e.Platform = nil }, skip: "no installed platform"},
		{name: "nothing running", code: CodeStuckWork},
		{name: "stopped upgrade", code: CodeStuckWork, setup: func(e *Env) { e.Platform.Status.Upgrade = stoppedUpgrade() },
			want: []wantFinding{stopped}},
		{name: "stopped rollback", code: CodeStuckWork, setup: func(e *Env) {
			e.Platform.Status.Upgrade = &v1alpha1.UpgradeStatus{Action: "rollback", From: "1.5.0", To: "1.4.0"}
		}, want: []wantFinding{{severity: SeverityError, object: "ontoplatform/onto",
			evidence: []string{"rollback 1.5.0 → 1.4.0 stopped"}, notEvidence: []string{" at ", "failed"},
			fix: []string{"--to 1.4.0", "kubectl onto rollback onto"}}}},
		{name: "stopped upgrade, expired lease", code: CodeStuckWork, setup: func(e *Env) {
			e.Platform.Status.Upgrade = stoppedUpgrade()
			e.Lease = testLease("alice@laptop", time.Hour, 10*time.Minute)
		}, want: []wantFinding{stopped, {severity: SeverityInfo, object: lease,
			evidence: []string{"expired lease of alice@laptop"}, fix: []string{"takes it over"}}}},
		{name: "upgrade running: live lease", code: CodeStuckWork, setup: func(e *Env) {
			e.Platform.Status.Upgrade = stoppedUpgrade()
			e.Lease = testLease("alice@laptop", 2*time.Minute, 10*time.Second)
		}, want: []wantFinding{{severity: SeverityInfo, object: lease, evidence: []string{"a run holds it: alice@laptop, for 2m"}}}},
		{name: "live lease held past --lease-stuck", code: CodeStuckWork, setup: func(e *Env) {
			e.Lease = testLease("ci-runner-7", 40*time.Minute, 5*time.Second)
		}, want: []wantFinding{{severity: SeverityWarning, object: lease,
			evidence: []string{"held by ci-runner-7 for 40m"}, fix: []string{"kubectl onto unlock onto -n onto-system"}}}},
		{name: "live lease held shortly", code: CodeStuckWork, setup: func(e *Env) {
			e.Lease = testLease("ci-runner-7", 3*time.Minute, 5*time.Second)
		}, want: []wantFinding{{severity: SeverityInfo, object: lease, evidence: []string{"a run holds it: ci-runner-7, for 3m"}, noFix: true}}},
		{name: "expired lease", code: CodeStuckWork, setup: func(e *Env) {
			e.Lease = testLease("ci-runner-7", 2*time.Hour, 90*time.Minute)
		}, want: []wantFinding{{severity: SeverityInfo, object: lease,
			evidence: []string{"expired lease of ci-runner-7"}, fix: []string{"the next run takes it over"}}}},
	})
}

func gatewayRef() plan.ObjectRef {
	return plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: testNamespace, Name: "gateway"}
}

func TestDriftCheck(t *testing.T) {
	withDesired := func(e *Env) {
		e.Desired = &plan.Desired{Namespace: testNamespace, Version: "1.5.0"}
		e.DesiredSource = "revision 7"
	}
	withPlan := func(changes ...plan.Change) func(e *Env) {
		return func(e *Env) {
			withDesired(e)
			e.Plan = &plan.Plan{Version: "1.5.0", Planes: []plan.PlanePlan{
				{Name: plan.PlatformPlane, Changes: []plan.Change{
					{Action: plan.ActionUpdate, Object: plan.ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: v1alpha1.CRDName},
						Fields: []plan.FieldChange{{Path: "spec.versions[0].schema", Old: "a", New: "b"}}},
					{Action: plan.ActionUpdate, Object: plan.ObjectRef{Group: "onto.paas", Version: "v1alpha1", Kind: "OntoPlatform", Namespace: testNamespace, Name: "onto"}},
				}},
				{Name: "gateway", Changes: changes},
			}}
		}
	}
	unchanged := plan.Change{Action: plan.ActionUnchanged, Object: plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: testNamespace, Name: "gateway"}}
	update := plan.Change{Action: plan.ActionUpdate, Object: gatewayRef(),
		Fields: []plan.FieldChange{
			{Path: "spec.replicas", Old: int64(4), New: int64(2)},
			{Path: "spec.template.spec.containers[0].env[1].value", New: "debug"},
		},
		Conflicts: []plan.Conflict{{Kind: plan.ConflictFieldManager, Field: "spec.replicas", Manager: "other-tool"}}}
	var many []plan.FieldChange
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		many = append(many, plan.FieldChange{Path: "metadata.labels." + p, Old: "x", New: "y"})
	}
	runCases(t, []checkCase{
		{name: "no platform", code: CodeDrift, setup: func(e *Env) { e.Platform = nil; withDesired(e) }, skip: "no installed platform"},
		{name: "upgrade in progress", code: CodeDrift, setup: func(e *Env) {
			withDesired(e)
			e.Platform.Status.Upgrade = stoppedUpgrade()
		}, skip: "an upgrade is stopped or running (ONTO-PLT-103)"},
		{name: "no desired state", code: CodeDrift, skip: "no revision snapshot of the applied spec"},
		{name: "plan failed", code: CodeDrift, setup: func(e *Env) {
			withDesired(e)
			e.PlanError = "the server does not serve kafka.strimzi.io/v1beta2 Kafka"
		}, want: []wantFinding{{severity: SeverityError, object: "ontoplatform/onto",
			evidence: []string{"cannot plan revision 7: the server does not serve kafka.strimzi.io/v1beta2 Kafka"}}}},
		{name: "no drift; the platform plane ignored", code: CodeDrift, setup: withPlan(unchanged)},
		{name: "update with a conflict", code: CodeDrift, setup: withPlan(unchanged, update),
			want: []wantFinding{{severity: SeverityError, object: "deployment/gateway",
				evidence: []string{"update: ", "spec.replicas: 4, applied 2", "spec.template.spec.containers[0].env[1].value: (none), applied debug",
					"spec.replicas now owned by other-tool"},
				fix: []string{"kubectl onto apply (revision 7) restores it", "kubectl onto plan"}}}},
		{name: "missing and left over", code: CodeDrift, setup: withPlan(
			plan.Change{Action: plan.ActionCreate, Object: gatewayRef()},
			plan.Change{Action: plan.ActionDelete, Object: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: testNamespace, Name: "gateway-old"}}),
			want: []wantFinding{
				{severity: SeverityError, object: "deployment/gateway", evidence: []string{"missing: the applied spec has it"}},
				{severity: SeverityError, object: "configmap/gateway-old", evidence: []string{"left over"}},
			}},
		{name: "many fields bounded", code: CodeDrift, setup: withPlan(plan.Change{Action: plan.ActionUpdate, Object: gatewayRef(), Fields: many}),
			want: []wantFinding{{severity: SeverityError, object: "deployment/gateway",
				evidence: []string{"metadata.labels.e: x, applied y", "and 2 more"}, notEvidence: []string{"metadata.labels.f"}}}},
		{name: "update without fields", code: CodeDrift, setup: withPlan(plan.Change{Action: plan.ActionReplace, Object: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Name: "postgres"}}),
			want: []wantFinding{{severity: SeverityError, object: "statefulset/postgres", evidence: []string{"replace"}}}},
	})
}
