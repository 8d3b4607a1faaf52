/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package mustrun

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSkipfFailsUnderMakeTest runs TestHelperSkip in a child go test process, once
// with EnvNoSkip=1 and once without: the first fails naming the reason, the second
// skips.
func TestSkipfFailsUnderMakeTest(t *testing.T) {
	for _, tc := range []struct {
		env      string
		wantFail bool
		want     string
	}{
		{env: "1", wantFail: true, want: "no widget here; ONTO_TEST_NO_SKIP=1 (make test): every test must run"},
		{env: "", wantFail: false, want: "--- SKIP: TestHelperSkip"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperSkip$", "-test.v")
		cmd.Env = append(os.Environ(), "ONTO_MUSTRUN_HELPER=1", EnvNoSkip+"="+tc.env)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("%s=%q: failed %t, want %t\n%s", EnvNoSkip, tc.env, failed, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%s=%q: output lacks %q:\n%s", EnvNoSkip, tc.env, tc.want, out)
		}
	}
}

// TestHelperSkip is TestSkipfFailsUnderMakeTest's child; it passes when run directly.
func TestHelperSkip(t *testing.T) {
	if os.Getenv("ONTO_MUSTRUN_HELPER") != "1" {
		return
	}
	Skipf(t, "no widget here")
}
