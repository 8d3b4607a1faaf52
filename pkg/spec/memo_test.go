/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// mapMemo is a Memo in memory that counts its stores.
type mapMemo struct {
	entries map[string][]byte
	puts    int
}

func (m *mapMemo) Get(key string) ([]byte, bool) { v, ok := m.entries[key]; return v, ok }
func (m *mapMemo) Put(key string, value []byte)  { m.entries[key] = value; m.puts++ }

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMemoRemembersValidDocuments: a second validator sharing the memo returns, for
// every example, the same defaulted platforms without storing them again, and what it
// returns comes from the memo (an entry changed in the memo shows through).
func TestMemoRemembersValidDocuments(t *testing.T) {
	for _, example := range []string{"minimal.yaml", "platform.yaml", "tenant.yaml", "external.yaml"} {
		t.Run(example, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(examplesDir, example))
			if err != nil {
				t.Fatal(err)
			}
			memo := &mapMemo{entries: map[string][]byte{}}
			first := newValidator(t)
			first.Memo = memo
			fresh, err := first.Load(example, data)
			if err != nil {
				t.Fatal(err)
			}
			if memo.puts != len(fresh) {
				t.Fatalf("stores after the first load = %d, want %d (one per platform)", memo.puts, len(fresh))
			}
			second := newValidator(t)
			second.Memo = memo
			recalled, err := second.Load(example, data)
			if err != nil {
				t.Fatal(err)
			}
			if memo.puts != len(fresh) {
				t.Errorf("stores after the second load = %d, want still %d", memo.puts, len(fresh))
			}
			if got, want := jsonOf(t, recalled), jsonOf(t, fresh); got != want {
				t.Errorf("recalled platforms differ from validated ones:\n got %s\nwant %s", got, want)
			}
			for key, value := range memo.entries {
				var p v1alpha1.OntoPlatform
				if err := json.Unmarshal(value, &p); err != nil {
					t.Fatal(err)
				}
				p.Spec.Global.ImageRegistry = "registry.from-the-memo.example"
				memo.entries[key] = []byte(jsonOf(t, &p))
			}
			again, err := newValidatorWithMemo(t, memo).Load(example, data)
			if err != nil {
				t.Fatal(err)
			}
			if again[0].Spec.Global.ImageRegistry != "registry.from-the-memo.example" {
				t.Errorf("third load's image registry = %q: the memo was not read", again[0].Spec.Global.ImageRegistry)
			}
		})
	}
}

func newValidatorWithMemo(t *testing.T, m spec.Memo) *spec.Validator {
	v := newValidator(t)
	v.Memo = m
	return v
}

// TestMemoForgetsNothingInvalid: an invalid document is never stored, so loading it
// again fails again with the same issues; an entry that does not decode is a miss; a
// validator with another catalog does not read the entries of this one.
func TestMemoForgetsNothingInvalid(t *testing.T) {
	memo := &mapMemo{entries: map[string][]byte{}}
	invalid := []byte("apiVersion: onto.paas/v1alpha1\nkind: OntoPlatform\nmetadata:\n  name: demo\nspec:\n  version: 9.9.9\n")
	var errs [2]string
	for i := range errs {
		_, err := newValidatorWithMemo(t, memo).Load("bad.yaml", invalid)
		var specErr *spec.Error
		if !errors.As(err, &specErr) {
			t.Fatalf("load %d of an invalid document: err = %v, want a *spec.Error", i+1, err)
		}
		errs[i] = err.Error()
	}
	if memo.puts != 0 || errs[0] != errs[1] {
		t.Fatalf("stores = %d (want 0); errors:\n%s\n%s", memo.puts, errs[0], errs[1])
	}

	data, err := os.ReadFile(filepath.Join(examplesDir, "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := newValidatorWithMemo(t, memo).Load("minimal.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for key := range memo.entries {
		memo.entries[key] = []byte("{not json")
	}
	got, err := newValidatorWithMemo(t, memo).Load("minimal.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, got) != jsonOf(t, want) || memo.puts != 2 {
		t.Errorf("after a corrupt entry: stores = %d (want 2: validated and stored again), same platform = %v", memo.puts, jsonOf(t, got) == jsonOf(t, want))
	}

	noCatalog, err := spec.NewValidator(nil)
	if err != nil {
		t.Fatal(err)
	}
	noCatalog.Memo = memo
	if _, err := noCatalog.Load("minimal.yaml", data); err != nil {
		t.Fatal(err)
	}
	if memo.puts != 3 {
		t.Errorf("stores = %d after a load with no catalog, want 3: another catalog is another key", memo.puts)
	}
}
