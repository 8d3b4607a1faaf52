/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace/noop"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/<test>/<name>.golden, or writes it with -update.
func golden(t *testing.T, got []byte, name string) {
	t.Helper()
	path := filepath.Join("testdata", strings.Split(t.Name(), "/")[0], name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	want = bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n"))
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// readEnv reads KEY=VALUE lines (# comments) as an environment.
func readEnv(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var env []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			env = append(env, line)
		}
	}
	return env
}

func getenvOf(env []string) func(string) string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestLoadConfig: the environments pkg/render gives a service (in the cluster with TLS,
// external backing services, none) and an invalid one, read into the Config /config
// shows (no secret in it), or every error at once.
func TestLoadConfig(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "TestLoadConfig", "*.env"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".env")
		t.Run(name, func(t *testing.T) {
			env := readEnv(t, in)
			c, err := LoadConfig(getenvOf(env), env)
			var got []byte
			if err != nil {
				got = []byte("error:\n" + err.Error() + "\n")
			} else {
				got, _ = json.MarshalIndent(c, "", "  ")
				got = append(got, '\n')
				for _, secret := range []string{"secret-pg", "secret-redis", `"sk"`} {
					if bytes.Contains(got, []byte(secret)) {
						t.Errorf("the configuration shows the secret %s", secret)
					}
				}
			}
			golden(t, got, name)
		})
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{in: "", want: Mode{}},
		{in: "crash", want: Mode{Name: "crash", Crash: true}},
		{in: "never-ready", want: Mode{Name: "never-ready", NeverReady: true}},
		{in: "fail20", want: Mode{Name: "fail20", FailRatio: 0.2}},
		{in: "slow5x", want: Mode{Name: "slow5x", SlowFactor: 5}},
		{in: "oom", want: Mode{Name: "oom", OOM: true}},
		{in: "fail101", wantErr: true},
		{in: "slow0.5x", wantErr: true},
		{in: "boom", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMode(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, m := range Modes {
		if _, err := ParseMode(m); err != nil {
			t.Errorf("image variant %s: %v", m, err)
		}
	}
}

func TestModeBehaviour(t *testing.T) {
	fail, _ := ParseMode("fail20")
	var failed int
	for i := range 100 {
		if fail.Fails(float64(i) / 100) {
			failed++
		}
	}
	if failed != 20 {
		t.Errorf("fail20 fails %d of 100 evenly spread draws, want 20", failed)
	}
	slow, _ := ParseMode("slow5x")
	if got := slow.ExtraDelay(100 * time.Millisecond); got != 400*time.Millisecond {
		t.Errorf("slow5x adds %s to 100ms, want 400ms (500ms in all)", got)
	}
	if got := slow.ExtraDelay(time.Millisecond); got != 4*SlowBase {
		t.Errorf("slow5x adds %s to 1ms, want 4×%s", got, SlowBase)
	}
	if got := (Mode{}).ExtraDelay(time.Second); got != 0 {
		t.Errorf("no mode adds %s", got)
	}
}

// fakeBackend answers as told.
type fakeBackend struct {
	name string
	mu   sync.Mutex
	err  error
	work int
}

func (f *fakeBackend) Name() string { return f.name }
func (f *fakeBackend) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
func (f *fakeBackend) Work(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.work++
	return f.err
}
func (f *fakeBackend) Close() {}
func (f *fakeBackend) set(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// TestReadiness: not ready before the first ping, ready while every backend answered
// within Stale, not ready when one stops answering past it, ready again (a reconnect)
// when it answers; never-ready holds it down.
func TestReadiness(t *testing.T) {
	pg, redis := &fakeBackend{name: "postgres"}, &fakeBackend{name: "redis"}
	clock := &fakeClock{now: time.Unix(1767225600, 0)}
	var pings []string
	r := &Readiness{
		Backends: []Backend{pg, redis}, Timeout: time.Second, Stale: 15 * time.Second, Now: clock.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnPing: func(b string, up, reconnected bool) {
			if reconnected {
				pings = append(pings, b+" reconnected")
			}
		},
	}
	ctx := t.Context()
	step := func(want bool, wantWhy string) {
		t.Helper()
		ok, why := r.Ready()
		if ok != want || !strings.Contains(why, wantWhy) {
			t.Fatalf("at %s: ready %v (%s), want %v (%s)", clock.now.Format(time.TimeOnly), ok, why, want, wantWhy)
		}
	}
	step(false, "not checked yet")
	redis.set(errors.New("connection refused"))
	r.CheckOnce(ctx)
	step(false, "redis: never answered: connection refused")
	redis.set(nil)
	r.CheckOnce(ctx)
	step(true, "ok")

	// A failing ping does not end readiness at once: a blip of one ping is no outage.
	pg.set(errors.New("timeout"))
	clock.now = clock.now.Add(5 * time.Second)
	r.CheckOnce(ctx)
	step(true, "ok")
	clock.now = clock.now.Add(11 * time.Second)
	r.CheckOnce(ctx)
	step(false, "postgres: no answer for 16s: timeout")
	pg.set(nil)
	r.CheckOnce(ctx)
	step(true, "ok")
	if diff := cmp.Diff([]string{"postgres reconnected"}, pings); diff != "" {
		t.Errorf("reconnects (-want +got):\n%s", diff)
	}
	r.NeverReady = true
	step(false, "never-ready")
}

func TestRateWindow(t *testing.T) {
	r := NewRateWindow(10 * time.Second)
	t0 := time.Unix(1767225600, 0)
	if got := r.Rate(t0); got != 0 {
		t.Fatalf("first rate %v", got)
	}
	for i := 1; i <= 20; i++ {
		r.Add(5) // 5 a second
		got := r.Rate(t0.Add(time.Duration(i) * time.Second))
		if i >= 10 && got != 5 {
			t.Fatalf("after %d s at 5/s: %v", i, got)
		}
	}
	for i := 21; i <= 31; i++ {
		_ = r.Rate(t0.Add(time.Duration(i) * time.Second))
	}
	if got := r.Rate(t0.Add(32 * time.Second)); got != 0 {
		t.Fatalf("idle for 12 s: %v", got)
	}
}

func testService(t *testing.T, mode string, backends ...Backend) (*Service, *[]time.Duration) {
	t.Helper()
	env := []string{"ONTO_COMPONENT=auth-service", "POSTGRES_HOST=pg", "REDIS_ADDR=r:6379", "ONTO_SAMPLE_MODE=" + mode}
	c, err := LoadConfig(getenvOf(env), env)
	if err != nil {
		t.Fatal(err)
	}
	var slept []time.Duration
	draws := []float64{0.1, 0.5, 0.9}
	n := 0
	return &Service{
		Config: c, Backends: backends, Metrics: NewMetrics(c), Tracer: noop.NewTracerProvider().Tracer(""),
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready: &Readiness{Backends: backends, Timeout: time.Second, Stale: time.Minute, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Rand:  func() float64 { n++; return draws[(n-1)%len(draws)] },
		Sleep: func(ctx context.Context, d time.Duration) {
			if ctx.Err() != nil {
				d = -1 // a sleep on a context already over does not sleep
			}
			slept = append(slept, d)
		},
	}, &slept
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestHandler: /readyz follows the backends, /work touches each and counts the result,
// a failing mode fails its share, a slow one sleeps, and the metrics count it all.
func TestHandler(t *testing.T) {
	pg, redis := &fakeBackend{name: "postgres"}, &fakeBackend{name: "redis"}
	s, _ := testService(t, "", pg, redis)
	h := s.Handler()
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	if code, body := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "not checked yet") {
		t.Errorf("/readyz before a ping: %d %s", code, body)
	}
	s.Ready.CheckOnce(t.Context())
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Errorf("/readyz with both answering: %d", code)
	}
	if code, body := get(t, h, "/work"); code != 200 || !strings.Contains(body, `"postgres":"ok"`) {
		t.Errorf("/work: %d %s", code, body)
	}
	redis.set(errors.New("NOAUTH"))
	if code, body := get(t, h, "/work"); code != 503 || !strings.Contains(body, `"redis":"NOAUTH"`) {
		t.Errorf("/work with redis failing: %d %s", code, body)
	}
	if pg.work != 2 || redis.work != 2 {
		t.Errorf("work done: postgres %d, redis %d, want 2 each", pg.work, redis.work)
	}
	if got := testutil.ToFloat64(s.Metrics.Work.WithLabelValues("redis", "error")); got != 1 {
		t.Errorf("onto_work_total{redis,error} %v", got)
	}
	if got := testutil.ToFloat64(s.Metrics.HTTPRequests.WithLabelValues("/work", "503")); got != 1 {
		t.Errorf("http_requests_total{/work,503} %v", got)
	}
	if code, body := get(t, h, "/config"); code != 200 || strings.Contains(body, "Password\":") && strings.Contains(body, "secret") {
		t.Errorf("/config: %d %s", code, body)
	}

	fail, _ := testService(t, "fail20", &fakeBackend{name: "postgres"}, &fakeBackend{name: "redis"})
	var codes []int
	for range 3 {
		code, _ := get(t, fail.Handler(), "/work")
		codes = append(codes, code)
	}
	if diff := cmp.Diff([]int{500, 200, 200}, codes); diff != "" {
		t.Errorf("fail20 over draws 0.1, 0.5, 0.9 (-want +got):\n%s", diff)
	}

	slow, slept := testService(t, "slow5x", &fakeBackend{name: "postgres"}, &fakeBackend{name: "redis"})
	get(t, slow.Handler(), "/work")
	if len(*slept) != 1 || (*slept)[0] < 4*SlowBase {
		t.Errorf("slow5x slept %v, want at least %s", *slept, 4*SlowBase)
	}
}

func TestClientCommands(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("fine\n"))
	}))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		args    []string
		client  bool
		wantErr bool
		want    string
	}{
		{args: []string{"get", srv.URL + "/ok"}, client: true, want: "fine\n"},
		{args: []string{"get", srv.URL + "/bad"}, client: true, wantErr: true},
		{args: []string{"dial", srv.Listener.Addr().String()}, client: true, want: "connected to " + srv.Listener.Addr().String()},
		{args: []string{"dial", closedAddr}, client: true, wantErr: true},
		{args: nil},
		{args: []string{"serve", "x"}},
	} {
		var out strings.Builder
		client, err := runClient(t.Context(), tc.args, &out)
		if client != tc.client || (err != nil) != tc.wantErr || !strings.HasPrefix(out.String(), tc.want) {
			t.Errorf("runClient(%q) = %t, %v, %q; want %t, error %t, %q", tc.args, client, err, out.String(), tc.client, tc.wantErr, tc.want)
		}
	}
}
