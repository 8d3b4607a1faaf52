/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package kube

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A list answer as the API server sends it: items without apiVersion or kind, integers,
// a float, nulls, nested lists and empty maps.
const deploymentList = `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"4711"},"items":[
{"metadata":{"name":"gateway","namespace":"t","generation":3,"labels":{"app":"gateway"},"managedFields":[{"manager":"kubectl-onto","operation":"Apply","apiVersion":"apps/v1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},
 "spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"gateway","resources":{"limits":{"cpu":0.5}},"args":[]}],"nodeSelector":null}}},
 "status":{"replicas":2,"conditions":[{"type":"Available","status":"True"}]}},
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other","namespace":"t","annotations":{}},"spec":{"replicas":9007199254740993}}]}`

// TestDecodeListAsTheDynamicClient: the one-pass decoder gives what the dynamic
// client's decoder gives, object for object.
func TestDecodeListAsTheDynamicClient(t *testing.T) {
	got, err := decodeList([]byte(deploymentList))
	if err != nil {
		t.Fatal(err)
	}
	want := &unstructured.UnstructuredList{}
	if err := want.UnmarshalJSON([]byte(deploymentList)); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 2 {
		t.Fatalf("decoded %d items, want 2", len(got.Items))
	}
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("list fields: got %v, want %v", got.Object, want.Object)
	}
	for i := range want.Items {
		if !reflect.DeepEqual(got.Items[i].Object, want.Items[i].Object) {
			t.Errorf("item %d: got\n%v\nwant\n%v", i, got.Items[i].Object, want.Items[i].Object)
		}
	}
	if r, _, _ := unstructured.NestedInt64(got.Items[1].Object, "spec", "replicas"); r != 9007199254740993 {
		t.Errorf("an integer beyond float64's precision decoded as %d", r)
	}
}

func TestDecodeListRefusesWhatIsNoList(t *testing.T) {
	for name, raw := range map[string]string{
		"an object":     `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"a"}}`,
		"an item array": `{"kind":"DeploymentList","apiVersion":"apps/v1","items":[1]}`,
		"not JSON":      `{"kind":`,
	} {
		if _, err := decodeList([]byte(raw)); err == nil || !strings.Contains(err.Error(), "decode the list") {
			t.Errorf("%s: got error %v, want one saying it cannot decode the list", name, err)
		}
	}
}
