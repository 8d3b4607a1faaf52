/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/coomia-dip/kubectl-onto/internal/image"
	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
	"github.com/coomia-dip/kubectl-onto/internal/registrytest"
)

// testVersion is linked into the test's binaries, and must come back from the
// binary pulled from the registry.
const testVersion = "v0.0.0-imagetest"

// The test's binaries are compiled once per test run: the cross-compilation for the
// other architecture is the costly part (once per GOCACHE; then a link, seconds).
var (
	compileOnce sync.Once
	compiled    []image.Binary
	compileErr  error
	compileDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if compileDir != "" {
		_ = os.RemoveAll(compileDir)
	}
	os.Exit(code)
}

// binaries are kubectl-onto for image.Platforms, built as the Makefile builds them
// (CGO_ENABLED=0, -s -w, the version linked in).
func binaries(t *testing.T) []image.Binary {
	t.Helper()
	mustrun.SkipIfShort(t, "compiles kubectl-onto for two platforms")
	compileOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			compileErr = err
			return
		}
		if compileDir, compileErr = os.MkdirTemp("", "onto-image-test-"); compileErr != nil {
			return
		}
		// Stop the go command (and its compilers) a minute before the test binary's
		// -timeout would panic and leave them running.
		ctx := context.Background()
		if deadline, ok := t.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute))
			defer cancel()
		}
		start := time.Now()
		compiled, compileErr = image.Compile(ctx, image.CompileOptions{
			ModuleDir: filepath.Dir(strings.TrimSpace(string(out))),
			LDFlags:   "-s -w -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.Version=" + testVersion,
			OutDir:    compileDir,
		})
		t.Logf("compiled kubectl-onto for %d platforms in %s", len(compiled), time.Since(start).Round(time.Millisecond))
	})
	if compileErr != nil {
		t.Fatal(compileErr)
	}
	return compiled
}

func testOptions(bins []image.Binary) image.Options {
	return image.Options{
		Binaries: bins,
		Version:  testVersion,
		Revision: "0123456789abcdef0123456789abcdef01234567",
		Source:   "https://github.com/coomia-dip/kubectl-onto",
		Created:  time.Unix(1767225600, 0), // 2026-01-01T00:00:00Z
	}
}

// TestImageBuildIsReproducible: the same binaries and options give the same index
// digest, in memory and in the OCI layouts written twice (index.json and every blob
// byte for byte); another Created gives another digest, so the check has teeth. The
// binaries themselves are the go command's: -trimpath, no VCS stamp, the same
// toolchain give the same bytes, which a second link of the host's shows.
func TestImageBuildIsReproducible(t *testing.T) {
	bins := binaries(t)
	opts := testOptions(bins)
	var digests []v1.Hash
	var dirs []string
	for i := range 2 {
		idx, err := image.Build(opts)
		if err != nil {
			t.Fatal(err)
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "image")
		if err := image.WriteLayout(dir, idx, opts.Version); err != nil {
			t.Fatal(err)
		}
		t.Logf("build %d: index %s", i+1, d)
		digests, dirs = append(digests, d), append(dirs, dir)
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds from the same inputs: index %s, then %s", digests[0], digests[1])
	}
	a, b := treeDigest(t, dirs[0]), treeDigest(t, dirs[1])
	if !maps.Equal(a, b) {
		t.Fatalf("two OCI layouts of the same inputs differ:\n%v\n%v", a, b)
	}
	back, err := image.ReadLayout(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := back.Digest(); d != digests[0] {
		t.Fatalf("the layout's index is %s, the build's %s", d, digests[0])
	}

	// Teeth, on small stand-ins for the binaries (cheap): a second earlier changes
	// the digest.
	small := testOptions(nil)
	for _, p := range image.Platforms {
		path := filepath.Join(t.TempDir(), "kubectl-onto")
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho "+p.Architecture+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		small.Binaries = append(small.Binaries, image.Binary{Platform: p, Path: path})
	}
	earlier := small
	earlier.Created = small.Created.Add(-time.Second)
	if a, b := indexDigest(t, small), indexDigest(t, earlier); a == b {
		t.Fatalf("another Created gave the same digest %s", a)
	}
	if a, b := indexDigest(t, small), indexDigest(t, small); a != b {
		t.Fatalf("the same small inputs gave %s, then %s", a, b)
	}

	host := hostBinary(t, bins)
	again, err := image.Compile(context.Background(), image.CompileOptions{
		ModuleDir: moduleDir(t), OutDir: t.TempDir(), Platforms: []v1.Platform{host.Platform},
		LDFlags: "-s -w -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.Version=" + testVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	if x, y := readFile(t, host.Path), readFile(t, again[0].Path); !bytes.Equal(x, y) {
		t.Fatalf("two links of kubectl-onto for %s differ (%d and %d bytes)", host.Platform, len(x), len(y))
	}
}

// TestImageRegistryRoundTrip pushes the index to a registry (distribution's, in
// process, on 127.0.0.1), pulls it by digest and checks what a runtime reads: both
// platforms, the config (user, entrypoint, labels, timestamps), the one layer's files,
// owners and modes; then runs the host's binary, taken from the pulled layer, as
// user 65532 in a read-only directory: `version` says the build's version, and
// `render` works with a HOME it cannot write (the render cache skips its store).
func TestImageRegistryRoundTrip(t *testing.T) {
	bins := binaries(t)
	opts := testOptions(bins)
	idx, err := image.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}

	host := registrytest.Start(t)
	ctx := context.Background()
	ref, err := image.Push(ctx, host+"/coomia-dip/kubectl-onto", opts.Version, idx)
	if err != nil {
		t.Fatal(err)
	}
	if ref.DigestStr() != want.String() {
		t.Fatalf("push returned %s, the index is %s", ref, want)
	}
	t.Logf("pushed %s", ref)

	// By tag, the registry serves the same index; by digest, what we check.
	tagged, err := remote.Index(mustRef(t, host+"/coomia-dip/kubectl-onto:"+opts.Version), remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := tagged.Digest(); d != want {
		t.Fatalf("tag %s is %s, pushed %s", opts.Version, d, want)
	}
	pulled, err := remote.Index(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", im.MediaType, types.OCIImageIndex)
	}
	wantAnns := opts.Annotations()
	for _, k := range []string{image.AnnotationSource, image.AnnotationRevision, image.AnnotationVersion, image.AnnotationCreated} {
		if im.Annotations[k] != wantAnns[k] || wantAnns[k] == "" {
			t.Errorf("index annotation %s = %q, want %q", k, im.Annotations[k], wantAnns[k])
		}
	}
	var platforms []string
	for _, desc := range im.Manifests {
		platforms = append(platforms, desc.Platform.String())
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}

	var hostExe []byte
	for i, desc := range im.Manifests {
		img, err := pulled.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := image.CompressedSize(img)
		t.Logf("%s: %s, %.1f MiB compressed", desc.Platform, desc.Digest, float64(size)/(1<<20))
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != desc.Platform.OS || cf.Architecture != desc.Platform.Architecture {
			t.Errorf("%s: config says %s/%s", desc.Platform, cf.OS, cf.Architecture)
		}
		if cf.Config.User != "65532:65532" {
			t.Errorf("%s: user %q, want 65532:65532", desc.Platform, cf.Config.User)
		}
		if !slices.Equal(cf.Config.Entrypoint, []string{"/kubectl-onto"}) {
			t.Errorf("%s: entrypoint %q", desc.Platform, cf.Config.Entrypoint)
		}
		for k, v := range wantAnns {
			if cf.Config.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", desc.Platform, k, cf.Config.Labels[k], v)
			}
		}
		if !cf.Created.Time.Equal(opts.Created) || len(cf.History) != 1 || !cf.History[0].Created.Time.Equal(opts.Created) {
			t.Errorf("%s: created %s, history %v: want every time %s", desc.Platform, cf.Created, cf.History, opts.Created)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON || m.Annotations[image.AnnotationRevision] != opts.Revision {
			t.Errorf("%s: manifest %s, config %s, annotations %v", desc.Platform, m.MediaType, m.Config.MediaType, m.Annotations)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
			t.Fatalf("%s: %d layers (%v), want one %s", desc.Platform, len(layers), m.Layers, types.OCILayer)
		}
		files := layerFiles(t, layers[0])
		checkLayer(t, desc.Platform.String(), files, opts.Created)
		if exe := files["kubectl-onto"].data; !bytes.Equal(exe, readFile(t, bins[i].Path)) {
			t.Errorf("%s: the layer's kubectl-onto is not the binary built for it", desc.Platform)
		}
		if desc.Platform.Architecture == runtime.GOARCH {
			hostExe = files["kubectl-onto"].data
		}
	}
	if hostExe == nil {
		mustrun.Skipf(t, "no image for the host's architecture %s to run", runtime.GOARCH)
	}
	runAsNonRoot(t, hostExe)
}

// runAsNonRoot runs exe, as taken from the image, as user 65532 (when the test runs
// as root; else as the test's own non-root user) from a directory that user cannot
// write, with HOME there too.
func runAsNonRoot(t *testing.T, exe []byte) {
	base, err := os.MkdirTemp("", "onto-image-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(base, "ro"), 0o755); _ = os.RemoveAll(base) })
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "kubectl-onto"), exe, 0o555); err != nil {
		t.Fatal(err)
	}
	platform := readFile(t, filepath.Join(moduleDir(t), "examples", "minimal.yaml"))
	if err := os.WriteFile(filepath.Join(ro, "platform.yaml"), platform, 0o444); err != nil {
		t.Fatal(err)
	}
	// base traversable by the user, ro not writable by it.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(ro, "kubectl-onto"), args...)
		cmd.Dir = ro
		cmd.Env = []string{"HOME=" + ro, "PATH=/", "NO_COLOR=1"}
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: image.UID, Gid: image.GID}}
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl-onto %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return out
	}
	user := "the test's user"
	if os.Geteuid() == 0 {
		user = "user 65532"
	}

	var v struct {
		Version  string `json:"version"`
		Platform string `json:"platform"`
	}
	out := run("version", "-o", "json")
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	if v.Version != testVersion || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("the image's binary says version %q on %s, want %s on %s/%s", v.Version, v.Platform, testVersion, runtime.GOOS, runtime.GOARCH)
	}
	rendered := run("render", "-f", "platform.yaml")
	if !bytes.Contains(rendered, []byte("kind: Deployment")) {
		t.Fatalf("render printed no Deployment:\n%.500s", rendered)
	}
	if entries, _ := os.ReadDir(ro); len(entries) != 2 {
		t.Fatalf("the read-only directory holds %d entries after the runs, want its 2 files", len(entries))
	}
	t.Logf("as %s in a read-only directory: version %s on %s, render %d bytes", user, v.Version, v.Platform, len(rendered))
}

type file struct {
	hdr  *tar.Header
	data []byte
}

func layerFiles(t *testing.T, l v1.Layer) map[string]file {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = file{h, data}
	}
	return files
}

// checkLayer: exactly these files, owners and modes, all at created; the CA bundle
// parses to Mozilla's roots; passwd names the user.
func checkLayer(t *testing.T, platform string, files map[string]file, created time.Time) {
	t.Helper()
	want := map[string]struct {
		mode     int64
		uid, gid int
	}{
		"etc/": {0o755, 0, 0}, "etc/group": {0o644, 0, 0}, "etc/passwd": {0o644, 0, 0},
		"etc/ssl/": {0o755, 0, 0}, "etc/ssl/certs/": {0o755, 0, 0}, "etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0},
		"home/": {0o755, 0, 0}, "home/nonroot/": {0o700, 65532, 65532},
		"kubectl-onto": {0o755, 0, 0}, "tmp/": {0o1777, 0, 0},
	}
	for name, w := range want {
		f, ok := files[name]
		if !ok {
			t.Errorf("%s: no %s in the layer", platform, name)
			continue
		}
		if f.hdr.Mode != w.mode || f.hdr.Uid != w.uid || f.hdr.Gid != w.gid || !f.hdr.ModTime.Equal(created) {
			t.Errorf("%s: %s mode %o uid %d gid %d mtime %s, want %o %d %d %s", platform, name, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, f.hdr.ModTime, w.mode, w.uid, w.gid, created)
		}
	}
	for name := range files {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected %s in the layer", platform, name)
		}
	}
	var roots int
	rest := files["etc/ssl/certs/ca-certificates.crt"].data
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Errorf("%s: CA bundle: %v", platform, err)
		}
		roots++
	}
	if roots < 100 {
		t.Errorf("%s: %d CA roots, want Mozilla's (over 100)", platform, roots)
	}
	if !bytes.Contains(files["etc/passwd"].data, []byte("nonroot:x:65532:65532:")) {
		t.Errorf("%s: passwd has no nonroot 65532:\n%s", platform, files["etc/passwd"].data)
	}
}

func indexDigest(t *testing.T, o image.Options) v1.Hash {
	t.Helper()
	idx, err := image.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func hostBinary(t *testing.T, bins []image.Binary) image.Binary {
	t.Helper()
	for _, b := range bins {
		if b.Platform.OS == runtime.GOOS && b.Platform.Architecture == runtime.GOARCH {
			return b
		}
	}
	mustrun.Skipf(t, "no binary for the host's %s/%s", runtime.GOOS, runtime.GOARCH)
	return image.Binary{}
}

func moduleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// treeDigest maps each file under dir to the SHA-256 of its contents.
func treeDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
