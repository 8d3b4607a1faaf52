/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// TestScaleArguments: what scale accepts for which component, and the errors that say
// what to do instead. Values pass editSpec and are then checked by the spec's
// validation, whose errors name the field.
func TestScaleArguments(t *testing.T) {
	v, err := spec.NewValidator(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, example, component string
		replicas, min, max       *int32
		// wantErr are fragments of the error; none means success.
		wantErr []string
		// wantChange is the edit's description.
		wantChange string
		check      func(t *testing.T, s *v1alpha1.OntoPlatformSpec)
		// prepare changes the example before the scale.
		prepare func(s *v1alpha1.OntoPlatformSpec)
	}{
		{name: "plain deployment", example: "minimal.yaml", component: "gateway", replicas: ptr.To[int32](2),
			wantChange: "replicas 1 → 2", check: func(t *testing.T, s *v1alpha1.OntoPlatformSpec) {
				if r := s.Gateway.Replicas; r == nil || *r != 2 {
					t.Errorf("spec.gateway.replicas = %v, want 2", r)
				}
			}},
		{name: "to zero", example: "minimal.yaml", component: "nessie", replicas: ptr.To[int32](0), wantChange: "replicas 1 → 0"},
		{name: "statefulset", example: "platform.yaml", component: "postgres", replicas: ptr.To[int32](1),
			wantChange: "replicas 3 → 1", check: func(t *testing.T, s *v1alpha1.OntoPlatformSpec) {
				if r := s.Infrastructure.Postgres.Replicas; r == nil || *r != 1 {
					t.Errorf("spec.infrastructure.postgres.replicas = %v, want 1", r)
				}
			}},
		{name: "autoscaled bounds", example: "platform.yaml", component: "data-service", min: ptr.To[int32](3), max: ptr.To[int32](30),
			wantChange: "autoscaling.minReplicas 2 → 3, autoscaling.maxReplicas 20 → 30", check: func(t *testing.T, s *v1alpha1.OntoPlatformSpec) {
				if a := s.DataPlane.DataService.Autoscaling; a.MinReplicas != 3 || a.MaxReplicas != 30 {
					t.Errorf("autoscaling = %d..%d, want 3..30", a.MinReplicas, a.MaxReplicas)
				}
			}},
		{name: "autoscaled max alone", example: "platform.yaml", component: "data-service", max: ptr.To[int32](4), wantChange: "autoscaling.maxReplicas 20 → 4"},
		{name: "unknown component lists the known ones", example: "minimal.yaml", component: "api", replicas: ptr.To[int32](2),
			wantErr: []string{`unknown component "api"`, "postgres, redis, minio, kafka, ontology-service", "gateway"}},
		{name: "replicas on an autoscaled component", example: "platform.yaml", component: "ontology-service", replicas: ptr.To[int32](4),
			wantErr: []string{"ontology-service is autoscaled", "spec.controlPlane.ontologyService.autoscaling.enabled", "--min and --max"}},
		{name: "bounds without autoscaling", example: "minimal.yaml", component: "gateway", min: ptr.To[int32](2),
			wantErr: []string{"gateway has no autoscaling", "spec.gateway.autoscaling", "use --replicas"}},
		{name: "bounds of a statefulset", example: "platform.yaml", component: "kafka", max: ptr.To[int32](5),
			wantErr: []string{"kafka is a StatefulSet", "use --replicas"}},
		{name: "both kinds", example: "minimal.yaml", component: "gateway", replicas: ptr.To[int32](2), max: ptr.To[int32](3),
			wantErr: []string{"exclude each other"}},
		{name: "nothing", example: "minimal.yaml", component: "gateway", wantErr: []string{"nothing to change"}},
		{name: "disabled component", example: "minimal.yaml", component: "kafka", replicas: ptr.To[int32](2),
			prepare: func(s *v1alpha1.OntoPlatformSpec) { s.Infrastructure.Kafka.Enabled = ptr.To(false) },
			wantErr: []string{"kafka is disabled", "spec.infrastructure.kafka.enabled: false"}},
		{name: "negative replicas name the field", example: "minimal.yaml", component: "gateway", replicas: ptr.To[int32](-1),
			wantErr: []string{"spec.gateway.replicas", "-1"}},
		{name: "min above max names the field", example: "platform.yaml", component: "data-service", min: ptr.To[int32](25),
			wantErr: []string{"spec.dataPlane.dataService.autoscaling.minReplicas", "less than or equal to maxReplicas"}},
		{name: "min of 0 names the field", example: "platform.yaml", component: "data-service", min: ptr.To[int32](0),
			wantErr: []string{"spec.dataPlane.dataService.autoscaling.minReplicas: Invalid value: 0: an autoscaler keeps at least 1 replica"}},
		{name: "max of 0 names the field", example: "platform.yaml", component: "data-service", max: ptr.To[int32](0),
			wantErr: []string{"spec.dataPlane.dataService.autoscaling.maxReplicas: Invalid value: 0"}},
		{name: "max above the schema's limit names the field", example: "platform.yaml", component: "data-service", max: ptr.To[int32](5000),
			wantErr: []string{"spec.dataPlane.dataService.autoscaling.maxReplicas", "5000"}},
		{name: "bounds excluding the spec's replicas name it", example: "platform.yaml", component: "ontology-service", max: ptr.To[int32](2),
			wantErr: []string{"spec.controlPlane.ontologyService.replicas", "must lie within"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ontotest.Example(t, tc.example, "ns")
			if tc.prepare != nil {
				tc.prepare(&p.Spec)
			}
			e, err := editSpec(&p.Spec, tc.component, tc.replicas, tc.min, tc.max)
			if err == nil {
				err = v.Validate(p)
			}
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; want one with %q", tc.wantErr)
				}
				for _, frag := range tc.wantErr {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("error %q does not contain %q", err, frag)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.change != tc.wantChange {
				t.Errorf("change = %q, want %q", e.change, tc.wantChange)
			}
			if tc.check != nil {
				tc.check(t, &p.Spec)
			}
		})
	}
}

// renderForTest renders p with its release, as scale does from a snapshot.
func renderForTest(t *testing.T, p *v1alpha1.OntoPlatform) *plan.Desired {
	t.Helper()
	d, err := platform.Loaded{Platform: p, Release: *ontotest.Release(t, p.Spec.Version)}.Desired()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestScaleRenderDiff: the objects an edit changes are those of the component whose
// rendering follows its replicas: the workload and a new disruption budget for a
// service, and for Kafka its (hash-named) configuration too (replication factors).
func TestScaleRenderDiff(t *testing.T) {
	tests := []struct {
		component string
		replicas  int32
		want      []string
	}{
		{component: "gateway", replicas: 2, want: []string{"apps/Deployment/ns/gateway", "policy/PodDisruptionBudget/ns/gateway"}},
		// 2, not 3: from 3 the controllers are dedicated, a change scale refuses.
		{component: "kafka", replicas: 2, want: []string{"/ConfigMap/ns/kafka-config-", "/ConfigMap/ns/kafka-config-", "apps/StatefulSet/ns/kafka", "policy/PodDisruptionBudget/ns/kafka"}},
	}
	for _, tc := range tests {
		t.Run(tc.component, func(t *testing.T) {
			from := ontotest.Example(t, "minimal.yaml", "ns")
			edited := from.DeepCopy()
			if _, err := editSpec(&edited.Spec, tc.component, &tc.replicas, nil, nil); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range renderDiff(renderForTest(t, from), renderForTest(t, edited)) {
				got = append(got, k)
			}
			slices.Sort(got)
			if len(got) != len(tc.want) {
				t.Fatalf("changed objects %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("changed objects %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// TestScaleScope: which planned changes a scale of gateway allows, and how a refusal
// reads: a change the edit makes (configuration that follows the replicas) or one it
// does not (drift from the revision).
func TestScaleScope(t *testing.T) {
	ref := func(group, kind, name string) plan.ObjectRef {
		return plan.ObjectRef{Group: group, Version: "v1", Kind: kind, Namespace: "ns", Name: name}
	}
	update := func(r plan.ObjectRef, paths ...string) plan.Change {
		c := plan.Change{Action: plan.ActionUpdate, Object: r}
		for _, p := range paths {
			c.Fields = append(c.Fields, plan.FieldChange{Path: p})
		}
		return c
	}
	deploy, pdb, hpa := ref("apps", "Deployment", "gateway"), ref("policy", "PodDisruptionBudget", "gateway"), ref("autoscaling", "HorizontalPodAutoscaler", "gateway")
	parent := ref(v1alpha1.GroupVersion.Group, v1alpha1.Kind, "p")
	config := ref("", "ConfigMap", "gateway-config-abc")
	sc := scaleScope{component: "gateway", specPath: "spec.gateway", edited: map[string]bool{
		scaleRefKey(deploy): true, scaleRefKey(pdb): true, scaleRefKey(config): true,
	}}
	tests := []struct {
		name    string
		changes []plan.Change
		// wantErr are fragments of the error; none means allowed.
		wantErr []string
	}{
		{name: "replicas, budget, parent", changes: []plan.Change{
			update(parent, "metadata.annotations["+inventory.ContainsGroupKindsAnnot+"]", "spec.gateway.replicas"),
			update(deploy, "spec.replicas"),
			{Action: plan.ActionCreate, Object: pdb},
			{Action: plan.ActionUnchanged, Object: config},
		}},
		{name: "autoscaler bounds", changes: []plan.Change{
			update(parent, "spec.gateway.autoscaling.maxReplicas"),
			update(hpa, "spec.maxReplicas"),
			{Action: plan.ActionDelete, Object: pdb},
		}},
		{name: "configuration follows the replicas", changes: []plan.Change{
			update(deploy, "spec.replicas", "spec.template.spec.containers[name=gateway].envFrom"),
			{Action: plan.ActionCreate, Object: config},
		}, wantErr: []string{"scaling gateway changes more than its replicas", "ConfigMap ns/gateway-config-abc would be created", "Set spec.gateway.replicas in the platform file"}},
		{name: "drift of another object", changes: []plan.Change{
			update(deploy, "spec.replicas"),
			update(ref("apps", "Deployment", "nessie"), "spec.template.spec.containers[name=nessie].image"),
		}, wantErr: []string{"drifted from revision 7", "Deployment ns/nessie (spec.template.spec.containers[name=nessie].image) would change", "apply -f"}},
		{name: "drift of the parent's spec", changes: []plan.Change{
			update(parent, "spec.gateway.replicas", "spec.observability.logging.level"),
		}, wantErr: []string{"drifted from revision 7", "OntoPlatform ns/p (spec.observability.logging.level) would change; nothing was written"}},
		{name: "drift of the workload beyond its replicas", changes: []plan.Change{
			{Action: plan.ActionUpdate, Object: ref("apps", "Deployment", "gateway"), Fields: []plan.FieldChange{{Path: "spec.template.metadata.labels.x"}}},
		}, wantErr: []string{"scaling gateway changes more"}},
		{name: "a prune elsewhere", changes: []plan.Change{
			{Action: plan.ActionDelete, Object: ref("", "Service", "old")},
		}, wantErr: []string{"drifted", "Service ns/old would be deleted"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sc.check(&plan.Plan{Planes: []plan.PlanePlan{{Name: "gateway", Changes: tc.changes}}}, 7)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *ScopeError
			if !errors.As(err, &se) {
				t.Fatalf("check = %v, want a *ScopeError", err)
			}
			for _, frag := range tc.wantErr {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("error %q does not contain %q", err, frag)
				}
			}
		})
	}
}

// TestScaleRenderedOverride: a patch in spec.patches that sets the replicas wins over
// the spec, so scale refuses rather than record a change the cluster never gets.
func TestScaleRenderedOverride(t *testing.T) {
	p := ontotest.Example(t, "minimal.yaml", "ns")
	p.Spec.Patches = []v1alpha1.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\nspec:\n  replicas: 5\n"}}
	e, err := editSpec(&p.Spec, "gateway", ptr.To[int32](2), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = checkRendered(renderForTest(t, p), e)
	if err == nil || !strings.Contains(err.Error(), "spec.patches override the replicas of Deployment gateway (it renders 5, not 2)") {
		t.Fatalf("checkRendered = %v, want the patch named", err)
	}
	e, _ = editSpec(&p.Spec, "nessie", ptr.To[int32](2), nil, nil)
	if err := checkRendered(renderForTest(t, p), e); err != nil {
		t.Fatalf("nessie, which no patch touches: %v", err)
	}
}

// TestScaleAppliedMetadata: the OntoPlatform keeps the labels and annotations the last
// apply applied (the file's), not those another manager added.
func TestScaleAppliedMetadata(t *testing.T) {
	live := &unstructured.Unstructured{}
	live.SetLabels(map[string]string{"team": "a", "added-by-hand": "x"})
	live.SetAnnotations(map[string]string{"owner": "b", "kubectl.kubernetes.io/restartedAt": "y"})
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl-onto", Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:team":{}},"f:annotations":{"f:owner":{}}},"f:spec":{}}`)},
		{Manager: "kubectl-onto", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
		{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:added-by-hand":{}}}}`)},
	})
	labels, annotations := appliedMetadata(live, "kubectl-onto")
	if len(labels) != 1 || labels["team"] != "a" || len(annotations) != 1 || annotations["owner"] != "b" {
		t.Fatalf("appliedMetadata = %v, %v; want team=a and owner=b alone", labels, annotations)
	}
}
