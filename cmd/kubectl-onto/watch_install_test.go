/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
)

// TestWatchInstall: what `watch install` prints for one fixed set of flags (golden:
// go test ./cmd/kubectl-onto/ -run TestWatchInstall -update), the same objects as
// JSON, and the flag combinations it refuses.
func TestWatchInstall(t *testing.T) {
	args := []string{"watch", "install", "--image", "registry.example/kubectl-onto:1.0.0", "-n", "onto-watch", "--namespaces", "team-b,team-a"}
	r := runCmd(t, args...)
	if r.code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", r.code, r.stderr)
	}
	golden.Assert(t, []byte(r.stdout), filepath.Join("testdata", "TestWatchInstall", "namespaces.golden"))

	r = runCmd(t, append(args, "-o", "json")...)
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
		t.Fatalf("-o json: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	if list.Kind != "List" || len(list.Items) != 15 {
		t.Fatalf("-o json: a List of the 15 objects, got kind %q with %d items", list.Kind, len(list.Items))
	}

	r = runCmd(t, "watch", "install", "--image", "img")
	if r.code != 0 || !strings.Contains(r.stdout, "\n  name: "+DefaultWatchNamespace+"\n") || !strings.Contains(r.stdout, "--namespaces="+DefaultWatchNamespace) {
		t.Fatalf("without -n the watch runs in, and watches, %s: exit %d\n%s", DefaultWatchNamespace, r.code, r.stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "install"}, "--image is required: this build (version dev) knows no image of its own; build and push one with make image-push IMAGE=REGISTRY/REPO"},
		{[]string{"watch", "install", "--image", "img", "-A", "--namespaces", "a"}, "--all-namespaces and --namespaces exclude each other"},
		{[]string{"watch", "install", "--image", "img", "--replicas", "0"}, "--replicas must be at least 1"},
		{[]string{"watch", "install", "--image", "img", "--force-conflicts"}, "--force-conflicts needs --apply"},
		{[]string{"watch", "install", "--image", "img", "-o", "name"}, `unknown output format "name"`},
	} {
		r := runCmd(t, tc.args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}

// TestWatchInstallDefaultImage: without --image the Deployment runs the image of the
// build's version, by digest when the build knows it; --image still wins; a dev
// build needs --image (TestWatchInstall). It sets the linker's variables, so it must
// not run beside another test (no t.Parallel: parallel tests start after it ends).
func TestWatchInstallDefaultImage(t *testing.T) {
	version, digest := buildinfo.Version, buildinfo.ImageDigest
	t.Cleanup(func() { buildinfo.Version, buildinfo.ImageDigest = version, digest })
	const sum = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		version, digest string
		args            []string
		want            string
	}{
		{"v0.4.0", "", nil, buildinfo.DefaultImageRepository + ":v0.4.0"},
		{"v0.4.0", sum, nil, buildinfo.DefaultImageRepository + ":v0.4.0@" + sum},
		{"v0.4.0", sum, []string{"--image", "registry.example/onto:mine"}, "registry.example/onto:mine"},
	} {
		buildinfo.Version, buildinfo.ImageDigest = tc.version, tc.digest
		r := runCmd(t, append([]string{"watch", "install"}, tc.args...)...)
		if r.code != 0 {
			t.Fatalf("version %s digest %q %v: exit %d\n%s", tc.version, tc.digest, tc.args, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "\n        image: "+tc.want+"\n") {
			t.Errorf("version %s digest %q %v: want the container's image %s in\n%s", tc.version, tc.digest, tc.args, tc.want, r.stdout)
		}
	}
	buildinfo.Version, buildinfo.ImageDigest = "a2506ca-dirty", ""
	if r := runCmd(t, "watch", "install"); r.code != exitFailure || !strings.Contains(r.stderr, "this build (version a2506ca-dirty) knows no image") {
		t.Errorf("a build from a modified tree: exit %d, stderr %q, want it to need --image", r.code, r.stderr)
	}
}
