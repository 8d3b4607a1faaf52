/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"runtime/debug"
	"testing"
)

// TestSetWatchGC: the watch collects at 50% heap growth unless GOGC says otherwise.
func TestSetWatchGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	setWatchGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != watchGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, watchGCPercent)
	}

	// GOGC set: the runtime read it at start; the watch leaves it as it is.
	debug.SetGCPercent(200)
	setWatchGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("GC percent %d with GOGC=200, want 200", got)
	}
}
