/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// TestWatchServicePortDriftAndWhatItCannotRepair: kubectl patch of the gateway
// Service's port (8080 → 8088) is repaired to the rendered port alone (server-side
// apply merges spec.ports by port, so its apply kept 8088 beside 8080 under one name,
// the API server refused the Service, and every repair of the pass stopped). Then,
// with an admission policy refusing the watch's writes to that Service, the same drift
// cannot be repaired: a ServiceAccount deleted meanwhile is still recreated, and the
// platform's conditions say what failed (Ready=False, Stalled=True naming the Service
// and the API server's answer; kstatus Failed). Once the policy goes, the platform is
// repaired and Ready again.
func TestWatchServicePortDriftAndWhatItCannotRepair(t *testing.T) {
	t.Parallel()
	e := startWatch(t)
	ctx, ns := t.Context(), e.p.Namespace
	services := e.clients.Kube.CoreV1().Services(ns)
	svc, err := services.Get(ctx, "gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rendered := svc.Spec.Ports[0].Port
	movePort := func() {
		t.Helper()
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/ports/0/port","value":%d}]`, rendered+8)
		if _, err := services.Patch(ctx, "gateway", types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
			t.Fatal(err)
		}
	}
	onlyRendered := func() (bool, error) {
		s, err := services.Get(ctx, "gateway", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(s.Spec.Ports) == len(svc.Spec.Ports) && s.Spec.Ports[0].Port == rendered, fmt.Errorf("ports %+v", s.Spec.Ports)
	}
	movePort()
	e.eventually("the gateway Service back on its rendered port alone", 30*time.Second, onlyRendered)
	e.eventually("Ready after the port repair", 30*time.Second, func() (bool, error) {
		return meta.IsStatusConditionTrue(e.live().Status.Conditions, v1alpha1.ConditionReady), nil
	})

	// Now the watch may not write that Service.
	name := "deny-onto-gateway-" + ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "the-watch", Expression: `has(request.options) && has(request.options.fieldManager) && request.options.fieldManager.startsWith("kubectl-onto")`}},
			Validations:     []admissionv1.Validation{{Expression: `object.metadata.name != "gateway"`, Message: "test policy: the gateway Service is frozen"}},
		},
	}
	admission := e.clients.Kube.AdmissionregistrationV1()
	if _, err := admission.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	if _, err := admission.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removePolicy := func() {
		_ = admission.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = admission.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
	}
	t.Cleanup(removePolicy)
	// The API server compiles and enforces a new policy within a second or so: until
	// the watch's own dry-run of the Service is refused, the drift would be repaired.
	e.eventually("the policy enforced", 30*time.Second, func() (bool, error) {
		_, err := services.Patch(ctx, "gateway", types.MergePatchType, []byte(`{"metadata":{"labels":{"probe":"x"}}}`),
			metav1.PatchOptions{FieldManager: "kubectl-onto-probe", DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "frozen"), err
	})

	movePort()
	if err := e.clients.Kube.CoreV1().ServiceAccounts(ns).Delete(ctx, "ontology-service", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the deleted ServiceAccount recreated beside the Service it cannot repair", 30*time.Second, func() (bool, error) {
		_, err := e.clients.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "ontology-service", metav1.GetOptions{})
		return err == nil, err
	})
	var ready *metav1.Condition
	e.eventually("Ready=False naming the Service and the refusal", 30*time.Second, func() (bool, error) {
		p := e.live()
		ready = meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
		stalled := meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionStalled)
		return ready != nil && ready.Status == metav1.ConditionFalse && stalled &&
			strings.Contains(ready.Message, "Service") && strings.Contains(ready.Message, "gateway") && strings.Contains(ready.Message, "frozen"), fmt.Errorf("Ready %+v", ready)
	})
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e.live())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.Kind))
	if res, err := kstatus.Compute(u); err != nil || res.Status != kstatus.FailedStatus {
		t.Errorf("kstatus with the Service unrepaired: %v %v, want Failed", res, err)
	}

	removePolicy()
	// Nothing tells the watch the policy went: it retries the failed pass on its error
	// backoff (30 s, doubling, here after at most three failures).
	removed := time.Now()
	e.eventually("the gateway Service repaired once the policy is gone", 150*time.Second, onlyRendered)
	t.Logf("repaired %s after the policy went", time.Since(removed).Round(time.Second))
	e.eventually("Ready again", 60*time.Second, func() (bool, error) {
		p := e.live()
		return meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionReady) &&
			!meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionStalled), nil
	})
	if _, err := admission.ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the test policy is still there: %v", err)
	}
}
