/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// AuditRecord is one change the reconciler made, one JSON line of --audit-log. Its
// names are part of the interface: never rename them.
type AuditRecord struct {
	Time     time.Time `json:"time"`
	Platform string    `json:"platform"`
	// Action is what was done: create, update, replace, delete, uninstall, or for
	// --drift=report drift-<action> (found, not done). The reactions to failing pods
	// add delete-evicted-pod and evict-pod (done), report-crashloop, report-evicted
	// and report-node-lost (an Event written, nothing changed); the memory remediation
	// raise-memory (a raised limit recorded in status.remediations) and
	// remediation-blocked (an OOM kill whose limit was not raised: the reason says why).
	Action string `json:"action"`
	Object string `json:"object,omitempty"`
	Plane  string `json:"plane,omitempty"`
	// Reason is why: reconcile (drift or a changed spec), report, deleted; for the
	// reactions crashloop, evicted, lost-node, oomkilled.
	Reason string `json:"reason"`
}

// AuditLog writes AuditRecords as JSON lines; safe for concurrent reconciles. A nil
// log discards.
type AuditLog struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewAuditLog writes to w.
func NewAuditLog(w io.Writer) *AuditLog { return &AuditLog{enc: json.NewEncoder(w)} }

// Write appends one record; a write error is dropped (the Event and the status still
// say what happened).
func (l *AuditLog) Write(r AuditRecord) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.enc.Encode(r)
}
