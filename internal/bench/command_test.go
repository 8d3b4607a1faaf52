/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMeasureCommandPeakRSS: the peak RSS of a child that touches 96 MiB is about
// that, although this process touched 300 MiB before starting it (getrusage's
// ru_maxrss would report the parent's 300 MiB for a child started by Go).
func TestMeasureCommandPeakRSS(t *testing.T) {
	const mib = 1 << 20
	if os.Getenv("ONTO_BENCH_CHILD_MIB") != "" {
		b := make([]byte, 96*mib)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		time.Sleep(200 * time.Millisecond) // not synchronisation: the child holds its memory a while, to be measured
		runtime.KeepAlive(b)
		return
	}
	big := make([]byte, 300*mib)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	m, err := MeasureCommand(t.Context(), []string{"ONTO_BENCH_CHILD_MIB=96"}, os.Args[0], "-test.run=^TestMeasureCommandPeakRSS$")
	runtime.KeepAlive(big)
	if err != nil {
		t.Fatal(err)
	}
	if m.PeakRSS < 96*mib || m.PeakRSS > 250*mib {
		t.Errorf("peak RSS of the child = %.1f MiB, want between 96 and 250 (this process: 300+)", float64(m.PeakRSS)/mib)
	}
}
