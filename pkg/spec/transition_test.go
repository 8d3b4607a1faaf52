/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// transitionCases are changes of a live platform, each with the fields refused.
var transitionCases = []struct {
	name   string
	old    func(*v1alpha1.OntoPlatformSpec)
	new    func(*v1alpha1.OntoPlatformSpec)
	refuse []string
}{
	{name: "nothing changes"},
	{name: "kafka 1 to 3 (combined to dedicated)", old: kafka(1), new: kafka(3), refuse: []string{"spec.infrastructure.kafka.replicas"}},
	{name: "kafka unset to 3", new: kafka(3), refuse: []string{"spec.infrastructure.kafka.replicas"}},
	{name: "kafka 5 to 2 (dedicated to combined)", old: kafka(5), new: kafka(2), refuse: []string{"spec.infrastructure.kafka.replicas"}},
	{name: "kafka 3 to 0", old: kafka(3), new: kafka(0), refuse: []string{"spec.infrastructure.kafka.replicas"}},
	{name: "kafka 3 to 9 brokers", old: kafka(3), new: kafka(9)},
	{name: "kafka 9 to 3 brokers", old: kafka(9), new: kafka(3)},
	{name: "kafka 1 to 2", old: kafka(1), new: kafka(2)},
	{name: "kafka unset to 1", new: kafka(1)},
	{name: "minio unset to 4", new: minioReplicas(4), refuse: []string{"spec.infrastructure.minio.replicas"}},
	{name: "minio 4 to 8", old: minioReplicas(4), new: minioReplicas(8), refuse: []string{"spec.infrastructure.minio.replicas"}},
	{name: "minio unset to 1", new: minioReplicas(1)},
	{name: "minio storage grows", old: minioStorage("500Gi"), new: minioStorage("1Ti"), refuse: []string{"spec.infrastructure.minio.storage"}},
	{name: "minio storage same size, other unit", old: minioStorage("10Gi"), new: minioStorage("10240Mi")},
	{name: "minio storage unset to its default", new: minioStorage("10Gi")},
	{name: "redis standalone to sentinel", new: redisMode(v1alpha1.RedisSentinel), refuse: []string{"spec.infrastructure.redis.mode"}},
	{name: "redis sentinel to standalone", old: redisMode(v1alpha1.RedisSentinel), new: redisMode(v1alpha1.RedisStandalone), refuse: []string{"spec.infrastructure.redis.mode"}},
	{name: "postgres and redis replicas scale", old: func(s *v1alpha1.OntoPlatformSpec) {}, new: func(s *v1alpha1.OntoPlatformSpec) {
		s.Infrastructure.Postgres.Replicas = ptr.To[int32](3)
		s.Infrastructure.Redis.Replicas = ptr.To[int32](3)
	}},
	{name: "all at once", old: kafka(1), new: func(s *v1alpha1.OntoPlatformSpec) {
		kafka(3)(s)
		minioReplicas(4)(s)
		redisMode(v1alpha1.RedisSentinel)(s)
	}, refuse: []string{"spec.infrastructure.kafka.replicas", "spec.infrastructure.minio.replicas", "spec.infrastructure.redis.mode"}},
}

func kafka(n int32) func(*v1alpha1.OntoPlatformSpec) {
	return func(s *v1alpha1.OntoPlatformSpec) { s.Infrastructure.Kafka.Replicas = ptr.To(n) }
}

func minioReplicas(n int32) func(*v1alpha1.OntoPlatformSpec) {
	return func(s *v1alpha1.OntoPlatformSpec) { s.Infrastructure.Minio.Replicas = ptr.To(n) }
}

func minioStorage(q string) func(*v1alpha1.OntoPlatformSpec) {
	return func(s *v1alpha1.OntoPlatformSpec) { s.Infrastructure.Minio.Storage = ptr.To(resource.MustParse(q)) }
}

func redisMode(m v1alpha1.RedisMode) func(*v1alpha1.OntoPlatformSpec) {
	return func(s *v1alpha1.OntoPlatformSpec) { s.Infrastructure.Redis.Mode = m }
}

// transitionPair is a defaulted live platform and its edit, as Load would return them.
func transitionPair(t *testing.T, v *Validator, old, new func(*v1alpha1.OntoPlatformSpec)) (*v1alpha1.OntoPlatform, *v1alpha1.OntoPlatform) {
	t.Helper()
	build := func(edit func(*v1alpha1.OntoPlatformSpec)) *v1alpha1.OntoPlatform {
		p := &v1alpha1.OntoPlatform{Spec: v1alpha1.OntoPlatformSpec{Version: "1.5.0"}}
		p.Name, p.Namespace = "onto", "onto"
		if edit != nil {
			edit(&p.Spec)
		}
		if err := v.Validate(p); err != nil {
			t.Fatalf("invalid test platform: %v", err)
		}
		return p
	}
	return build(old), build(new)
}

// TestCheckTransition: each change that would break a live cluster is refused at its
// field with the CRD rule's message; the others pass.
func TestCheckTransition(t *testing.T) {
	v, err := NewValidator(nil)
	if err != nil {
		t.Fatal(err)
	}
	messages := map[string]string{
		"spec.infrastructure.kafka.replicas": msgKafkaQuorum,
		"spec.infrastructure.minio.replicas": msgMinioReplicas,
		"spec.infrastructure.minio.storage":  msgMinioStorage,
		"spec.infrastructure.redis.mode":     msgRedisMode,
	}
	for _, tc := range transitionCases {
		t.Run(tc.name, func(t *testing.T) {
			old, new := transitionPair(t, v, tc.old, tc.new)
			errs := CheckTransition(&old.Spec, &new.Spec)
			if diff := cmp.Diff(tc.refuse, fieldsOf(errs)); diff != "" {
				t.Errorf("refused fields (-want +got):\n%s", diff)
			}
			for _, e := range errs {
				if e.Type != field.ErrorTypeInvalid || e.Detail != messages[e.Field] {
					t.Errorf("%s: %s %q, want Invalid with %q", e.Field, e.Type, e.Detail, messages[e.Field])
				}
			}
		})
	}
}

// TestTransitionMatchesCRD: the API server's transition rules, the CRD's CEL compiled
// as the server compiles it, refuse the same fields with the same messages as
// CheckTransition for every case, so offline and server never disagree.
func TestTransitionMatchesCRD(t *testing.T) {
	v, err := NewValidator(nil)
	if err != nil {
		t.Fatal(err)
	}
	refusedSomething := false
	for _, tc := range transitionCases {
		t.Run(tc.name, func(t *testing.T) {
			old, new := transitionPair(t, v, tc.old, tc.new)
			oldObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
			if err != nil {
				t.Fatal(err)
			}
			newObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(new)
			if err != nil {
				t.Fatal(err)
			}
			celErrs, _ := v.schema.cel.Validate(context.Background(), nil, v.schema.structural, newObj, oldObj, celconfig.RuntimeCELCostBudget)
			offline := CheckTransition(&old.Spec, &new.Spec)
			if diff := cmp.Diff(details(offline), details(celErrs)); diff != "" {
				t.Errorf("offline (-) and CRD (+) disagree:\n%s", diff)
			}
			refusedSomething = refusedSomething || len(celErrs) > 0
		})
	}
	if !refusedSomething {
		t.Error("the CRD refused no case: its transition rules are missing")
	}
}

func fieldsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	sort.Strings(out)
	return out
}

// details are "field: type: message" of each error, sorted: the CEL validator's value
// ("object") differs from the offline one, which shows the new value.
func details(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+string(e.Type)+": "+e.Detail)
	}
	sort.Strings(out)
	return out
}
