/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// Kubectl runs the kubectl binary against the cluster, on a file of the same objects
// the plugin applies, with the plugin's field manager: the same server-side apply, so
// the runs compare tools, not objects.
type Kubectl struct {
	Path       string
	Kubeconfig string
	// CacheDir is kubectl's discovery cache (--cache-dir); a private one keeps other
	// users' kubectl runs from warming or clearing it.
	CacheDir string
}

// KubectlRun is one measured kubectl command.
type KubectlRun struct {
	Wall time.Duration
	// Requests are counted from kubectl's -v=6 log, when asked for.
	Requests Counts
	// Differs is set when kubectl diff found differences (exit status 1).
	Differs bool
	Output  string
	// PeakRSS is kubectl's maximum resident set size, in bytes.
	PeakRSS int64
}

// Diff runs kubectl diff --server-side on file.
func (k Kubectl) Diff(ctx context.Context, file string, count bool) (*KubectlRun, error) {
	return k.run(ctx, count, "diff", "--server-side", "--field-manager="+plan.FieldManager, "-f", file)
}

// Apply runs kubectl apply --server-side on file.
func (k Kubectl) Apply(ctx context.Context, file string, count bool) (*KubectlRun, error) {
	return k.run(ctx, count, "apply", "--server-side", "--field-manager="+plan.FieldManager, "-f", file)
}

// WaitReady runs what a user adds to kubectl apply to know an install is up: kubectl
// wait for every Deployment with selector (all namespaces) to be Available, then for
// their pods and the StatefulSets' to be Ready (not the Jobs': a completed pod is
// never Ready). It waits only for pods that exist when it starts (a StatefulSet's
// later ordinals not), so it can only finish early.
func (k Kubectl) WaitReady(ctx context.Context, selector string) (time.Duration, error) {
	var wall time.Duration
	for _, args := range [][]string{
		{"--for=condition=Available", "deployments", "-A", "-l", selector, "--timeout=15m"},
		{"--for=condition=Ready", "pods", "-A", "-l", selector + ",!batch.kubernetes.io/job-name", "--timeout=15m"},
	} {
		r, err := k.run(ctx, false, "wait", args...)
		if err != nil {
			return 0, err
		}
		wall += r.Wall
	}
	return wall, nil
}

// WaitPodsDeleted runs kubectl wait --for=delete on every pod of namespace: what a
// user adds to a teardown that waits only for its objects (helm uninstall --wait) to
// know the workloads' pods have stopped too. None left is success.
func (k Kubectl) WaitPodsDeleted(ctx context.Context, namespace string) (*KubectlRun, error) {
	return k.run(ctx, false, "wait", "--for=delete", "pods", "--all", "-n", namespace, "--timeout=15m")
}

// run runs kubectl with args; with count, at -v=6, counting requests from the log
// (which slows kubectl down: counted runs are not timed ones).
func (k Kubectl) run(ctx context.Context, count bool, sub string, args ...string) (*KubectlRun, error) {
	args = append([]string{sub, "--kubeconfig", k.Kubeconfig}, args...)
	if k.CacheDir != "" {
		args = append(args, "--cache-dir", k.CacheDir)
	}
	if count {
		args = append(args, "-v=6")
	}
	cmd := exec.CommandContext(ctx, k.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	peak, err := runPeakRSS(cmd)
	run := &KubectlRun{Wall: time.Since(start), Output: stdout.String(), PeakRSS: peak}
	var exit *exec.ExitError
	if sub == "diff" && errors.As(err, &exit) && exit.ExitCode() == 1 {
		run.Differs, err = true, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kubectl %s: %w\n%s", sub, err, lastLines(stderr.String(), 20))
	}
	if count {
		if run.Requests, err = ParseKubectlLog(&stderr); err != nil {
			return nil, err
		}
	}
	return run, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
