/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Memo remembers what a validation found: under a key naming a document and the
// release catalog it was checked against, the document's defaulted platform.
// Validation is a function of the document, the CRD compiled into the binary and the
// catalog's versions, so a document this build found valid once is valid again, with
// the same defaults: a plan or apply of an unchanged file skips compiling the CRD's
// CEL rules. The Memo must tell builds apart (pkg/rendercache keys by the
// executable). Only valid documents are remembered: an invalid one is validated every
// time, so its errors are always reported in full. Whatever the Memo returns that does
// not decode is a miss.
type Memo interface {
	Get(key string) ([]byte, bool)
	Put(key string, value []byte)
}

// memoKey names a document checked against this validator's catalog; "" without a
// Memo. Only the catalog's versions matter: membership is all checkVersion asks.
func (v *Validator) memoKey(document []byte) string {
	if v.Memo == nil {
		return ""
	}
	h := sha256.New()
	var versions []string
	if v.catalog != nil {
		versions = v.catalog.Versions()
	}
	fmt.Fprintf(h, "kubectl-onto validated document v1\ncatalog %t %s\n", v.catalog != nil, strings.Join(versions, ","))
	h.Write(document)
	return hex.EncodeToString(h.Sum(nil))
}

// recall returns the platform remembered under key, nil when there is none.
func (v *Validator) recall(key string) *v1alpha1.OntoPlatform {
	if key == "" {
		return nil
	}
	data, ok := v.Memo.Get(key)
	if !ok {
		return nil
	}
	p := &v1alpha1.OntoPlatform{}
	if err := json.Unmarshal(data, p); err != nil || p.Kind != v1alpha1.Kind || p.Spec.Version == "" {
		return nil
	}
	return p
}

// remember stores p, the validated platform of the document key names.
func (v *Validator) remember(key string, p *v1alpha1.OntoPlatform) {
	if key == "" {
		return
	}
	data, err := json.Marshal(p)
	if err != nil {
		return
	}
	v.Memo.Put(key, data)
}
