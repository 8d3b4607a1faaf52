/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"encoding/base64"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// TestGenerateValuesFormats: a key named in onto.paas/generate-format gets a value of
// that format (a KRaft cluster id: 22 base64url characters decoding to 16 bytes, not
// starting with "-"), the others a password; an unknown format is refused.
func TestGenerateValuesFormats(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	secret.SetAnnotations(map[string]string{
		v1alpha1.AnnotationGenerateKeys:   "cluster-id,password",
		v1alpha1.AnnotationGenerateFormat: "cluster-id=" + v1alpha1.GenerateFormatKafkaClusterID,
	})
	seen := map[string]bool{}
	for range 200 {
		values, err := generateValues(plan.GeneratedKeys(secret), plan.GeneratedFormats(secret))
		if err != nil {
			t.Fatal(err)
		}
		id := string(values["cluster-id"])
		raw, err := base64.RawURLEncoding.DecodeString(id)
		if len(id) != 22 || err != nil || len(raw) != 16 || id[0] == '-' {
			t.Fatalf("cluster id %q (%d characters, %d bytes, %v) is not a Kafka cluster id", id, len(id), len(raw), err)
		}
		if seen[id] {
			t.Fatalf("cluster id %q drawn twice", id)
		}
		seen[id] = true
		if n := len(values["password"]); n != 32 {
			t.Fatalf("password of %d characters, want 32 (24 random bytes)", n)
		}
	}
	if _, err := generateValues([]string{"x"}, map[string]string{"x": "uuid-v9"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}
