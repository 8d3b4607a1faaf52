/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testimages

import (
	"archive/tar"
	"flag"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/coomia-dip/kubectl-onto/internal/image"
	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
	"github.com/coomia-dip/kubectl-onto/internal/registrytest"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

var update = flag.Bool("update", false, "rewrite test/releases")

func moduleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestCatalog: test/releases is what WriteCatalog writes (-update rewrites it), loads
// beside the shipped catalog as --releases does, and names only test images but Kafka's.
func TestCatalog(t *testing.T) {
	root := moduleDir(t)
	dir := filepath.Join(root, "test", "releases")
	if *update {
		if err := WriteCatalog(dir, root, nil); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	if err := WriteCatalog(fresh, root, nil); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(fresh, "*.yaml"))
	if len(files) == 0 {
		t.Fatal("WriteCatalog wrote nothing")
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(dir, filepath.Base(f)))
		if err != nil {
			t.Fatalf("%v (go test ./internal/testimages -run TestCatalog -update writes it)", err)
		}
		got, _ := os.ReadFile(f)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("test/releases/%s is stale (-update rewrites it):\n%s", filepath.Base(f), diff)
		}
	}
	c, err := release.Load(manifests.FS, manifests.ReleasesDir, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range c.Versions() {
		r, err := c.Get(v)
		if err != nil {
			t.Fatal(err)
		}
		for comp := range r.Components {
			ref, err := r.Image(comp, ImageRegistry, "")
			if err != nil {
				t.Fatal(err)
			}
			if comp == "kafka" || comp == "kafka-controller" {
				continue
			}
			if !strings.HasPrefix(ref, RegistryHost+"/"+Repository+"/") {
				t.Errorf("%s %s: image %s is not a test image", v, comp, ref)
			}
		}
		if ref, _ := r.Image("ontology-service", ImageRegistry, ""); ref != ImageRegistry+"/sample-service:"+v {
			t.Errorf("%s ontology-service: %s", v, ref)
		}
	}

	// A variant pins the one service to its misbehaving tag.
	shipped, _ := release.Default()
	r, _ := shipped.Get("1.6.0")
	tr, err := TestRelease(r, "", map[string]string{"auth-service": "crash"})
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := tr.Image("auth-service", ImageRegistry, ""); ref != ImageRegistry+"/sample-service:1.6.0-crash" {
		t.Errorf("auth-service in crash mode: %s", ref)
	}
	if _, err := TestRelease(r, "", map[string]string{"auth-service": "explode"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

// TestImages builds every image (MinIO only with ONTO_TESTIMAGES_MINIO=1: a cold build
// of its server takes many minutes) into the cache's OCI layouts, pushes each to a
// registry in process, pulls it by digest and checks what a runtime reads: user,
// entrypoint, env, and the files the rendered pods run. The Debian images need apt-get
// and dpkg-deb (and apt's lists: apt-get update once); without them the test skips.
func TestImages(t *testing.T) {
	mustrun.SkipIfShort(t, "builds the test images")
	names := []string{"pause", "kafka", "sample-service", "redis", "postgres"}
	if os.Getenv("ONTO_TESTIMAGES_MINIO") == "1" {
		names = append(names, "minio")
	}
	for _, tool := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			mustrun.Skipf(t, "no %s: the Debian images cannot be built here", tool)
		}
	}
	cache := os.Getenv("ONTO_TESTIMAGES_CACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(dir, "onto-testimages")
	}
	b := &Builder{ModuleDir: moduleDir(t), CacheDir: cache}
	registry := registrytest.Start(t)
	// The sample service's twelve tags share one layer: read each layer once.
	seen := map[v1.Hash]map[string]image.File{}

	for _, n := range names {
		built, err := b.Build(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d tags, cached %v, %s", n, len(built.Images), built.Cached, built.Took)
		for _, tagged := range built.Images {
			d, err := Push(t.Context(), registry, tagged)
			if err != nil {
				t.Fatal(err)
			}
			pulled, err := remote.Image(d, remote.WithContext(t.Context()))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := pulled.Digest(); got.String() != d.DigestStr() {
				t.Fatalf("%s: pulled %s", d, got)
			}
			tag, _ := name.NewTag(tagged.Ref(registry), name.Insecure)
			if byTag, err := remote.Image(tag); err != nil {
				t.Fatal(err)
			} else if got, _ := byTag.Digest(); got.String() != d.DigestStr() {
				t.Fatalf("%s is %s, pushed %s", tag, got, d)
			}
			layers, err := pulled.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("%s: %d layers (%v), want one", d, len(layers), err)
			}
			ld, _ := layers[0].Digest()
			files, ok := seen[ld]
			if !ok {
				files = layerFiles(t, pulled)
				seen[ld] = files
				if c, u, err := Sizes(pulled); err != nil || c != tagged.Compressed || u != tagged.Uncompressed {
					t.Errorf("%s: sizes %d, %d (%v); the cache says %d, %d", d, c, u, err, tagged.Compressed, tagged.Uncompressed)
				}
			}
			checkImage(t, tagged.Name, tagged.Tag, pulled, files)
		}
	}
}

func checkImage(t *testing.T, imgName, tag string, img v1.Image, files map[string]image.File) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != "amd64" || !cf.Created.Time.Equal(Created) {
		t.Errorf("%s:%s: %s/%s created %s", imgName, tag, cf.OS, cf.Architecture, cf.Created)
	}
	if c.Labels[image.AnnotationVersion] != tag {
		t.Errorf("%s:%s: version label %q", imgName, tag, c.Labels[image.AnnotationVersion])
	}
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	type want struct {
		user       string
		entrypoint []string
		env        map[string]string
		// files that must resolve (through links) to a regular file, owner:mode when set
		files []string
	}
	var w want
	switch imgName {
	case "pause":
		w = want{user: "65535:65535", entrypoint: []string{"/pause"}, files: []string{"pause"}}
	case "sample-service":
		version, mode, _ := strings.Cut(tag, "-")
		w = want{user: "65532:65532", entrypoint: []string{"/sample-service"},
			env:   map[string]string{"ONTO_SAMPLE_RELEASE": version, "ONTO_SAMPLE_MODE": mode, "SSL_CERT_FILE": image.CABundle},
			files: []string{"sample-service", "etc/ssl/certs/ca-certificates.crt", "etc/passwd"}}
	case "redis":
		w = want{user: "999:999", files: []string{"usr/bin/redis-server", "usr/bin/redis-sentinel", "usr/bin/redis-cli", "bin/sh", "usr/bin/cat", "usr/bin/head", "usr/bin/cp"}}
	case "postgres":
		w = want{user: "999:999", entrypoint: []string{"docker-entrypoint.sh"},
			env: map[string]string{"PGDATA": "/var/lib/postgresql/data"},
			files: []string{"usr/local/bin/docker-entrypoint.sh", "usr/bin/bash", "bin/sh", "usr/lib/postgresql/15/bin/postgres",
				"usr/lib/postgresql/15/bin/initdb", "usr/lib/postgresql/15/bin/pg_ctl", "usr/lib/postgresql/15/bin/pg_isready",
				"usr/lib/postgresql/15/bin/pg_basebackup", "usr/lib/postgresql/15/bin/psql", "usr/share/postgresql/15/postgres.bki",
				"usr/bin/grep", "usr/bin/mktemp", "usr/bin/id", "usr/bin/mv"}}
	case "minio":
		w = want{user: "1000:1000", entrypoint: []string{"minio"}, files: []string{"usr/bin/minio", "usr/bin/mc", "bin/sh"}}
	case "kafka":
		w = want{user: "1000:1000", entrypoint: []string{"/usr/bin/kafka-fake"}, files: []string{"usr/bin/kafka-fake"}}
	}
	if c.User != w.user {
		t.Errorf("%s:%s: user %q, want %q", imgName, tag, c.User, w.user)
	}
	if w.entrypoint != nil && !slices.Equal(c.Entrypoint, w.entrypoint) {
		t.Errorf("%s:%s: entrypoint %q, want %q", imgName, tag, c.Entrypoint, w.entrypoint)
	}
	for k, v := range w.env {
		if env[k] != v {
			t.Errorf("%s:%s: env %s=%q, want %q", imgName, tag, k, env[k], v)
		}
	}
	for _, f := range w.files {
		got := resolve(files, f)
		if got == "" {
			t.Errorf("%s:%s: no /%s", imgName, tag, f)
			continue
		}
		if files[got].Mode&0o111 == 0 && (strings.Contains(f, "bin/") || !strings.Contains(f, "/")) && f != "etc/passwd" {
			t.Errorf("%s:%s: /%s (/%s) is not executable: %o", imgName, tag, f, got, files[got].Mode)
		}
	}
	if imgName == "postgres" {
		if d := files["var/run/postgresql/"]; d.UID != 999 {
			t.Errorf("postgres: /var/run/postgresql owned by %d", d.UID)
		}
	}
}

// layerFiles are the files of an image's layers, as image.Files (mode, owner, link).
func layerFiles(t *testing.T, img v1.Image) map[string]image.File {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]image.File{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			f := image.File{Name: path.Clean(h.Name), Mode: h.Mode, UID: h.Uid, GID: h.Gid}
			switch h.Typeflag {
			case tar.TypeDir:
				f.Name += "/"
			case tar.TypeSymlink:
				f.Symlink = h.Linkname
			}
			files[f.Name] = f
		}
		rc.Close()
	}
	return files
}
