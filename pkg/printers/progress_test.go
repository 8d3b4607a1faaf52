/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// A run over several platforms names the platform on each line; a run over one
// prints what it always printed.
func TestProgressPlatform(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	events := []apply.Event{
		{Type: apply.EventPlaneStarted, Plane: "control", Message: "3 objects"},
		{Type: apply.EventDone, Message: "3 objects written", Phase: "Ready", Version: "1.6.0", ReadyComponents: "2/2"},
	}
	tests := []struct {
		name     string
		platform string
		json     bool
		want     string
	}{
		{"one platform, text", "", false,
			"[  0.0s] ▸ control (3 objects)\n[  0.0s] ✓ done: 3 objects written (Ready, version 1.6.0, 2/2 components ready)\n"},
		{"several, text", "tenant-a/tenant-a", false,
			"tenant-a/tenant-a [  0.0s] ▸ control (3 objects)\ntenant-a/tenant-a [  0.0s] ✓ done: 3 objects written (Ready, version 1.6.0, 2/2 components ready)\n"},
		{"several, json", "tenant-a/tenant-a", true,
			`{"platform":"tenant-a/tenant-a","type":"PlaneStarted","plane":"control","message":"3 objects","elapsedSeconds":0}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := &printers.Progress{Out: &out, Term: printers.Plain(&out), JSON: tc.json, Now: clock, Platform: tc.platform}
			for _, e := range events {
				p.Handle(e)
			}
			got := out.String()
			if tc.json {
				got = got[:bytes.IndexByte(out.Bytes(), '\n')+1]
			}
			if got != tc.want {
				t.Errorf("progress:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
