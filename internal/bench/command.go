/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
)

// CommandRun is one run of the built kubectl-onto binary, timed from start to exit,
// with its progress events (-o json) and its API requests by class (read from -v 6).
type CommandRun struct {
	Wall     time.Duration
	Events   []PluginEvent
	Requests Counts
}

// PluginEvent is a progress event of the binary with its time since the start of the run.
type PluginEvent struct {
	apply.Event
	Elapsed float64 `json:"elapsedSeconds"`
}

// RunPlugin runs bin with args, -o json and -v 6 against kubeconfig and returns what
// it did; a non-zero exit is an error with the end of its stderr.
func RunPlugin(ctx context.Context, bin, kubeconfig string, args ...string) (*CommandRun, error) {
	return runPlugin(ctx, bin, kubeconfig, 0, args...)
}

// RunPluginExit is RunPlugin for a command whose exit code up to maxExit is a result,
// not a failure: doctor exits 1 when it finds an error.
func RunPluginExit(ctx context.Context, bin, kubeconfig string, maxExit int, args ...string) (*CommandRun, error) {
	return runPlugin(ctx, bin, kubeconfig, maxExit, args...)
}

// TimePlugin runs bin with args against kubeconfig as a user types it (no -v, no
// -o json: the logging of each request slows a run down) and returns its wall time,
// process start to exit; a non-zero exit is an error with the end of its output.
func TimePlugin(ctx context.Context, bin, kubeconfig string, args ...string) (time.Duration, error) {
	return TimePluginEnv(ctx, nil, bin, kubeconfig, args...)
}

// TimePluginEnv is TimePlugin with env added to the environment (NAME=value), such as
// ONTO_RENDER_CACHE=off for a run that renders as if the file were new.
func TimePluginEnv(ctx context.Context, env []string, bin, kubeconfig string, args ...string) (time.Duration, error) {
	return TimeCommand(ctx, env, bin, append(args, "--kubeconfig", kubeconfig)...)
}

// TimeCommand runs path with args, env added to the environment, and returns its wall
// time, process start to exit; a non-zero exit is an error with the end of its output.
// It times a peer's command (helm) the same way as the plugin.
func TimeCommand(ctx context.Context, env []string, path string, args ...string) (time.Duration, error) {
	m, err := MeasureCommand(ctx, env, path, args...)
	if err != nil {
		return 0, err
	}
	return m.Wall, nil
}

// Measured is one whole run of a command: wall time, peak RSS and what it printed.
type Measured struct {
	Wall time.Duration
	// PeakRSS is the process's maximum resident set size (getrusage), in bytes.
	PeakRSS        int64
	Stdout, Stderr []byte
}

// MeasureCommand runs path with args, env added to the environment, and returns its
// wall time, peak RSS and output; a non-zero exit is an error with the end of its
// output.
func MeasureCommand(ctx context.Context, env []string, path string, args ...string) (*Measured, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	peak, err := runPeakRSS(cmd)
	m := &Measured{Wall: time.Since(start), PeakRSS: peak, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", filepath.Base(path), strings.Join(args, " "), err, lastLines(stdout.String()+stderr.String(), 15))
	}
	return m, nil
}

// runPeakRSS runs cmd and returns its peak resident set size, in bytes: the
// high-water mark the kernel keeps for its memory (VmHWM), sampled every 10 ms while it
// runs, so growth in its last 10 ms may be missed. Not getrusage's ru_maxrss: Go
// starts a child sharing its own memory until the exec (vfork), and the kernel
// counts the parent's resident set into the child's maximum, so a child smaller than
// this process reports this process's size.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan struct{})
	sampled := make(chan int64, 1)
	go func() {
		var peak int64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if hwm := vmHWM(status); hwm > peak {
				peak = hwm
			}
			select {
			case <-done:
				sampled <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return <-sampled, err
}

// vmHWM reads VmHWM (kB) from a /proc/PID/status file, in bytes; 0 when it cannot.
func vmHWM(status string) int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

func runPlugin(ctx context.Context, bin, kubeconfig string, maxExit int, args ...string) (*CommandRun, error) {
	args = append(args, "-o", "json", "-v", "6", "--kubeconfig", kubeconfig)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := &CommandRun{Wall: time.Since(start), Requests: Counts{}}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() <= maxExit && ctx.Err() == nil {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("kubectl-onto %s: %w\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 15))
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev PluginEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type != "" {
			r.Events = append(r.Events, ev)
		}
	}
	r.Requests = CountLogLines(strings.Split(stderr.String(), "\n"))
	return r, nil
}

// CountLogLines counts, by class, the API responses that -v 6 logged in lines (the
// binary's stderr); other lines are ignored.
func CountLogLines(lines []string) Counts {
	c := Counts{}
	for _, line := range lines {
		if !strings.Contains(line, "msg=Response") {
			continue
		}
		verb, raw := field(line, "verb="), field(line, "url=")
		if u, err := url.Parse(raw); err == nil && verb != "" {
			c[Classify(verb, u)]++
		}
	}
	return c
}

// field is the value of key=value in a logfmt line.
func field(line, key string) string {
	i := strings.Index(line, " "+key)
	if i < 0 {
		return ""
	}
	v := line[i+1+len(key):]
	if end := strings.IndexByte(v, ' '); end >= 0 {
		v = v[:end]
	}
	return strings.Trim(v, `"`)
}

// ComponentTiming is how long one component of an upgrade took, from its events,
// split into the waits the procedure is made of. Each interval runs from one of the
// component's events to its next: CanaryReady from the canary's start ("canary:",
// or a StatefulSet's "updating the highest ordinal first") to it being ready and
// watched; Soak from there to the next step; Rollout from "rolling out" to the next
// step (the component on the new version, or the soak of a one-pod StatefulSet).
// Total is from the component's first event to its last.
type ComponentTiming struct {
	Name                       string
	CanaryReady, Soak, Rollout time.Duration
	Total                      time.Duration
}

// Waits is the sum of the component's canary-ready, soak and rollout times: what the
// procedure must wait for, the rest being the tool's own work.
func (c ComponentTiming) Waits() time.Duration { return c.CanaryReady + c.Soak + c.Rollout }

// Components are the per-component timings of an upgrade or rollback run, in the
// order the components finished; a component without a "✓ on" event (a failed one,
// or a rollback that moves planes, not components) has none.
func (r *CommandRun) Components() []ComponentTiming {
	var out []ComponentTiming
	events := map[string][]PluginEvent{}
	for _, ev := range r.Events {
		if ev.Type != apply.EventUpgradeStep || ev.Object == "" {
			continue
		}
		c := ev.Object
		events[c] = append(events[c], ev)
		if !strings.HasPrefix(ev.Message, "✓ on") {
			continue
		}
		evs := events[c]
		t := ComponentTiming{Name: c, Total: secs(ev.Elapsed - evs[0].Elapsed)}
		for i, e := range evs[:len(evs)-1] {
			d := secs(evs[i+1].Elapsed - e.Elapsed)
			switch {
			case strings.HasPrefix(e.Message, "canary:"), strings.HasPrefix(e.Message, "updating the highest ordinal first"):
				t.CanaryReady += d
			case strings.Contains(e.Message, "; watching it for"):
				t.Soak += d
			case strings.HasPrefix(e.Message, "rolling out"):
				t.Rollout += d
			}
		}
		out = append(out, t)
	}
	return out
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
