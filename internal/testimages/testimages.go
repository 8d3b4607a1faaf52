/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package testimages builds the images the tests run on real nodes, with
// go-containerregistry and the project's image code (internal/image), no container
// engine: the pods' sandbox (pause), the sample platform service of each release and
// its misbehaving variants, Postgres and Redis from Debian 12's packages, and MinIO
// from its Go module. Every image is linux/amd64, every timestamp Created, so the same
// inputs give the same digests; built images are kept as OCI layouts under a cache
// directory keyed by their inputs, so a second run only pushes.
package testimages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "embed"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/coomia-dip/kubectl-onto/internal/image"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

const (
	// RegistryHost is the name the test nodes' containerd maps to the local registry
	// (hosts.toml), so image references never carry its port.
	RegistryHost = "registry.onto.test"
	// Repository is the path under the registry of every test image; a platform's
	// spec.global.imageRegistry is RegistryHost/Repository.
	Repository = "onto"
)

// Created is every timestamp of every test image: a constant, so an image changes
// only when its inputs do.
var Created = time.Unix(1767225600, 0).UTC() // 2026-01-01T00:00:00Z

// Platform of the test images: the test nodes' (linux/amd64 only).
var Platform = v1.Platform{OS: "linux", Architecture: "amd64"}

// Tags of the images that are not per release.
const (
	PauseTag    = "3.10"
	RedisTag    = "7.0"
	PostgresTag = "15"
)

// Names are the images Build knows, in build order (cheapest first).
var Names = []string{"pause", "kafka", "sample-service", "redis", "postgres", "minio"}

// Tagged is one image under one tag of RegistryHost/Repository/Name.
type Tagged struct {
	Name, Tag string
	Image     v1.Image
	// Compressed is what a pull transfers (manifest, config, layers); Uncompressed the
	// size of the layers' tars, recorded when the image was built.
	Compressed, Uncompressed int64
}

// Ref is the image's reference under registry (host:port, or RegistryHost).
func (t Tagged) Ref(registry string) string {
	return registry + "/" + Repository + "/" + t.Name + ":" + t.Tag
}

// Builder builds the test images.
type Builder struct {
	// ModuleDir is the repository's root.
	ModuleDir string
	// CacheDir keeps the .deb files and the built layouts.
	CacheDir string
	// Go is the go command; "go" when empty.
	Go string
	// Stderr hears progress and the go command's errors.
	Stderr io.Writer
}

// Built is what Build returns for one name: its tagged images, and whether they came
// from the cache.
type Built struct {
	Images []Tagged
	Cached bool
	Took   time.Duration
}

// Build returns the images of name, from the cache when its key is there.
func (b *Builder) Build(ctx context.Context, imgName string) (Built, error) {
	start := time.Now()
	key, err := b.key(ctx, imgName)
	if err != nil {
		return Built{}, fmt.Errorf("%s: %w", imgName, err)
	}
	dir := filepath.Join(b.CacheDir, "layouts", imgName+"-"+key[:16])
	if imgs, err := readLayout(dir, imgName); err == nil {
		return Built{Images: imgs, Cached: true, Took: time.Since(start)}, nil
	}
	var imgs []Tagged
	switch imgName {
	case "pause":
		imgs, err = b.pause(ctx)
	case "sample-service":
		imgs, err = b.sampleService(ctx)
	case "redis", "postgres":
		imgs, err = b.debian(ctx, imgName)
	case "minio":
		imgs, err = b.minio(ctx)
	case "kafka":
		imgs, err = b.kafka(ctx)
	default:
		err = fmt.Errorf("unknown image (known: %s)", strings.Join(Names, ", "))
	}
	if err != nil {
		return Built{}, fmt.Errorf("%s: %w", imgName, err)
	}
	if err := writeLayout(dir, imgs); err != nil {
		return Built{}, fmt.Errorf("%s: cache: %w", imgName, err)
	}
	// Read back: the pushed bytes are those of the layout, as on a warm run.
	if imgs, err = readLayout(dir, imgName); err != nil {
		return Built{}, fmt.Errorf("%s: cache: %w", imgName, err)
	}
	return Built{Images: imgs, Took: time.Since(start)}, nil
}

// key hashes the inputs of an image: the builder's Key, the toolchain and the sources
// of a Go program, the pinned packages of a Debian image.
func (b *Builder) key(ctx context.Context, imgName string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "image %s\n", imgName)
	// How images are made: this package, internal/image, the command, and the
	// versions of go-containerregistry and the rest (go.sum).
	for _, d := range []string{"internal/image", "internal/testimages", "hack/testimages/main.go", "go.sum"} {
		if err := hashTree(h, filepath.Join(b.ModuleDir, d)); err != nil {
			return "", err
		}
	}
	goVersion := func() error {
		out, err := exec.CommandContext(ctx, b.goCmd(), "env", "GOVERSION").Output()
		if err != nil {
			return fmt.Errorf("go env GOVERSION: %w", err)
		}
		fmt.Fprintf(h, "go %s", out)
		return nil
	}
	var dirs []string
	switch imgName {
	case "pause":
		dirs = []string{"hack/testimages/pause"}
	case "sample-service":
		dirs = []string{"test/sampleservice"}
		fmt.Fprintf(h, "releases %v\n", b.releases())
	case "minio":
		dirs = []string{"hack/testimages/minio", "hack/testimages/mc"}
	case "kafka":
		dirs = []string{"hack/testimages/kafka"}
	case "redis", "postgres":
		pins, err := debianPins(imgName)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "pins %v\n", pins)
	}
	if len(dirs) > 0 {
		if err := goVersion(); err != nil {
			return "", err
		}
	}
	for _, d := range dirs {
		if err := hashTree(h, filepath.Join(b.ModuleDir, d)); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashTree hashes the build inputs under dir (or the file dir): every file but tests
// and testdata, by relative name and content.
func hashTree(h io.Writer, dir string) error {
	fmt.Fprintf(h, "tree %s\n", filepath.Base(dir))
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		fmt.Fprintf(h, "%s %x\n", rel, sha256.Sum256(data))
		return nil
	})
}

func (b *Builder) goCmd() string {
	if b.Go == "" {
		return "go"
	}
	return b.Go
}

// compile builds a static binary of pkg in the module at dir (relative to ModuleDir).
func (b *Builder) compile(ctx context.Context, dir, pkg, binName, ldflags string) ([]byte, error) {
	out, err := os.MkdirTemp("", "onto-testimages-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	bins, err := image.Compile(ctx, image.CompileOptions{
		Go: b.Go, ModuleDir: filepath.Join(b.ModuleDir, dir), Package: pkg, Name: binName,
		LDFlags: ldflags, OutDir: out, Platforms: []v1.Platform{Platform}, Stderr: b.Stderr,
	})
	if err != nil {
		return nil, err
	}
	return os.ReadFile(bins[0].Path)
}

// labels are the OCI labels and annotations of a test image.
func labels(title, version string) map[string]string {
	return map[string]string{
		image.AnnotationTitle:   title,
		image.AnnotationVersion: version,
		image.AnnotationCreated: Created.Format(time.RFC3339),
		image.AnnotationSource:  "https://github.com/coomia-dip/kubectl-onto",
	}
}

func oneLayerImage(files []image.File, createdBy string, cfg v1.Config) (v1.Image, error) {
	layer, err := image.Layer(files, Created)
	if err != nil {
		return nil, err
	}
	return image.NewImage(image.ImageSpec{
		Platform: Platform, Created: Created, Config: cfg, Annotations: cfg.Labels,
		Layers: []image.LayerSpec{{Layer: layer, CreatedBy: createdBy}},
	})
}

// pause: the static pause binary alone, run as 65535 as registry.k8s.io/pause is.
func (b *Builder) pause(ctx context.Context) ([]Tagged, error) {
	exe, err := b.compile(ctx, ".", "./hack/testimages/pause", "pause", "-s -w")
	if err != nil {
		return nil, err
	}
	img, err := oneLayerImage([]image.File{{Name: "pause", Mode: 0o755, Data: exe}}, "go build ./hack/testimages/pause",
		v1.Config{User: "65535:65535", Entrypoint: []string{"/pause"}, Labels: labels("pause", PauseTag)})
	if err != nil {
		return nil, err
	}
	return []Tagged{{Name: "pause", Tag: PauseTag, Image: img}}, nil
}

// SampleModes are the misbehaving variants of the sample service, by tag suffix
// (test/sampleservice Modes).
var SampleModes = []string{"crash", "never-ready", "fail20", "slow5x", "oom"}

// releases are the platform versions of the shipped catalog.
func (b *Builder) releases() []string {
	c, err := release.Default()
	if err != nil {
		return nil
	}
	return c.Versions()
}

// SampleTag is the sample service's tag of a release, in a mode ("" behaves).
func SampleTag(version, mode string) string {
	if mode == "" {
		return version
	}
	return version + "-" + mode
}

// sampleService: one binary, one layer (with the CA roots and passwd of the operator's
// image), and a config per release and mode: the variants differ by ONTO_SAMPLE_MODE
// only, so they share every blob but their config.
func (b *Builder) sampleService(ctx context.Context) ([]Tagged, error) {
	exe, err := b.compile(ctx, "test/sampleservice", ".", "sample-service", "-s -w")
	if err != nil {
		return nil, err
	}
	roots, err := image.CARoots()
	if err != nil {
		return nil, err
	}
	files := append(image.BaseFiles(roots), image.File{Name: "sample-service", Mode: 0o755, Data: exe})
	layer, err := image.Layer(files, Created)
	if err != nil {
		return nil, err
	}
	var out []Tagged
	for _, version := range b.releases() {
		for _, mode := range append([]string{""}, SampleModes...) {
			tag := SampleTag(version, mode)
			env := []string{"PATH=/", "HOME=" + image.Home, "SSL_CERT_FILE=" + image.CABundle, "ONTO_SAMPLE_RELEASE=" + version}
			if mode != "" {
				env = append(env, "ONTO_SAMPLE_MODE="+mode)
			}
			img, err := image.NewImage(image.ImageSpec{
				Platform: Platform, Created: Created, Annotations: labels("sample-service", tag),
				Layers: []image.LayerSpec{{Layer: layer, CreatedBy: "go build ./test/sampleservice", Comment: "sample-service, CA roots, passwd"}},
				Config: v1.Config{
					User: image.User, Entrypoint: []string{"/sample-service"}, Env: env, WorkingDir: "/",
					ExposedPorts: map[string]struct{}{"8080/tcp": {}, "9090/tcp": {}, "9091/tcp": {}},
					Labels:       labels("sample-service", tag),
				},
			})
			if err != nil {
				return nil, err
			}
			out = append(out, Tagged{Name: "sample-service", Tag: tag, Image: img})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no release in the shipped catalog")
	}
	return out, nil
}

// sizesFile records each image's sizes beside the layout, by digest: the uncompressed
// size would otherwise cost a decompression of every layer on each run.
const sizesFile = "onto-sizes.json"

// writeLayout writes imgs as the OCI layout dir, each named by its tag, atomically.
func writeLayout(dir string, imgs []Tagged) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	sizes := map[string][2]int64{}
	for _, t := range imgs {
		if err := p.AppendImage(t.Image, layout.WithAnnotations(map[string]string{image.AnnotationRefName: t.Tag})); err != nil {
			return err
		}
		d, err := t.Image.Digest()
		if err != nil {
			return err
		}
		if _, ok := sizes[d.String()]; !ok {
			c, u, err := Sizes(t.Image)
			if err != nil {
				return err
			}
			sizes[d.String()] = [2]int64{c, u}
		}
	}
	data, err := json.Marshal(sizes)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, sizesFile), data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another build of the same inputs (a test beside hack/testimages) got there
		// first: its layout is the same bytes. A broken one is replaced.
		if _, rerr := readLayout(dir, ""); rerr == nil {
			return nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		return os.Rename(tmp, dir)
	}
	return nil
}

// readLayout reads the tagged images writeLayout wrote.
func readLayout(dir, imgName string) ([]Tagged, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, sizesFile))
	if err != nil {
		return nil, err
	}
	var sizes map[string][2]int64
	if err := json.Unmarshal(data, &sizes); err != nil {
		return nil, fmt.Errorf("%s: %w", sizesFile, err)
	}
	var out []Tagged
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		s, ok := sizes[d.Digest.String()]
		if !ok {
			return nil, fmt.Errorf("%s: no sizes of %s", sizesFile, d.Digest)
		}
		out = append(out, Tagged{Name: imgName, Tag: d.Annotations[image.AnnotationRefName], Image: img, Compressed: s[0], Uncompressed: s[1]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty layout", dir)
	}
	return out, nil
}

// Push writes t to registry (host:port, plain HTTP) and returns its reference by digest.
func Push(ctx context.Context, registry string, t Tagged) (name.Digest, error) {
	ref, err := name.NewTag(t.Ref(registry), name.Insecure)
	if err != nil {
		return name.Digest{}, err
	}
	if err := remote.Write(ref, t.Image, remote.WithContext(ctx)); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := t.Image.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Context().Digest(d.String()), nil
}

// Sizes are an image's compressed size (what a pull transfers: manifest, config,
// layers) and uncompressed size (its layers' tars).
func Sizes(img v1.Image) (compressed, uncompressed int64, err error) {
	if compressed, err = image.CompressedSize(img); err != nil {
		return 0, 0, err
	}
	layers, err := img.Layers()
	if err != nil {
		return 0, 0, err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return 0, 0, err
		}
		n, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return 0, 0, err
		}
		uncompressed += n
	}
	return compressed, uncompressed, nil
}
