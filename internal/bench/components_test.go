/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// TestComponentsFromRecordedUpgrade splits the recorded events of the production
// example's upgrade to 1.6.0 (--canary-soak 3s, on the test cluster) into each
// component's waits.
func TestComponentsFromRecordedUpgrade(t *testing.T) {
	f, err := os.Open("testdata/upgrade-1.6.0-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := &CommandRun{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev PluginEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		r.Events = append(r.Events, ev)
	}
	comps := r.Components()
	if len(comps) != 14 {
		t.Fatalf("%d components, want the example's 14", len(comps))
	}
	// postgres: partition at 0 s, postgres-2 watched at 8.77 s, rolling out at
	// 11.80 s, on 1.6.0 at 28.39 s.
	pg := comps[0]
	near := func(what string, got time.Duration, want float64) {
		t.Helper()
		if d := got.Seconds() - want; d < -0.01 || d > 0.01 {
			t.Errorf("postgres %s: %s, want %.2fs", what, got, want)
		}
	}
	if pg.Name != "postgres" {
		t.Fatalf("first component %s, want postgres", pg.Name)
	}
	near("canary ready", pg.CanaryReady, 8.77)
	near("soak", pg.Soak, 3.03)
	near("rollout", pg.Rollout, 16.59)
	near("total", pg.Total, 28.39)
	var soaked int
	for _, c := range comps {
		if c.Waits() > c.Total {
			t.Errorf("%s: waits %s longer than the component's %s", c.Name, c.Waits(), c.Total)
		}
		if c.Soak >= 3*time.Second {
			soaked++
		}
	}
	// Every component with a canary or a partition was watched for the 3 s soak;
	// components whose workloads all roll without one (new ones) have no soak.
	if soaked < 12 {
		t.Errorf("%d components soaked 3 s or more, want at least 12: %+v", soaked, comps)
	}
}
