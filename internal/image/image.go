//go:build unix

/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package image builds the image that runs `kubectl onto watch` in a cluster, with Go
// tooling only (no container engine): the static kubectl-onto binary of each platform,
// cross-compiled by the go command, in one layer with the CA roots and the passwd and
// group entries of its non-root user, under one OCI image index. The same inputs give
// the same bytes: every timestamp is Options.Created, every file is owned by root
// (but the user's home) with a fixed mode, the CA roots come from a Go module
// (golang.org/x/crypto/x509roots/fallback), not from the machine that builds.
package image

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// What the image runs, and as whom.
const (
	// Entrypoint is the binary's path in the image.
	Entrypoint = "/kubectl-onto"
	// UID and GID of the user the image runs as: distroless's nonroot, which the
	// watch's Deployment also sets (runAsUser, runAsGroup).
	UID = 65532
	GID = 65532
	// User is the config's user: numeric, so a runtime needs no passwd lookup to
	// tell it is not root (runAsNonRoot).
	User = "65532:65532"
	// Home of the user, the one directory it owns in the image.
	Home = "/home/nonroot"
	// CABundle is where the CA roots are, the first place Go's crypto/x509 looks
	// on Linux.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
)

// OCI annotation keys, set on the index and each manifest, and as labels in each
// config (which `docker inspect` and most registries' UIs show).
const (
	AnnotationSource   = "org.opencontainers.image.source"
	AnnotationRevision = "org.opencontainers.image.revision"
	AnnotationVersion  = "org.opencontainers.image.version"
	AnnotationCreated  = "org.opencontainers.image.created"
	AnnotationTitle    = "org.opencontainers.image.title"
	AnnotationLicenses = "org.opencontainers.image.licenses"
	// AnnotationRefName names the index in an OCI layout's index.json.
	AnnotationRefName = "org.opencontainers.image.ref.name"
)

// Platforms are those the image is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Binary is a static kubectl-onto built for Platform.
type Binary struct {
	Platform v1.Platform
	Path     string
}

// Options are the inputs of an image: nothing else goes into its bytes.
type Options struct {
	// Binaries, one per platform, in the index's order.
	Binaries []Binary
	// Version of kubectl-onto (the tag), Revision the commit it was built from,
	// Source the repository's URL.
	Version, Revision, Source string
	// Created is every timestamp of the image (SOURCE_DATE_EPOCH).
	Created time.Time
}

// Annotations are the OCI annotations of o's index, manifests and configs.
func (o Options) Annotations() map[string]string {
	a := map[string]string{
		AnnotationTitle:    "kubectl-onto",
		AnnotationLicenses: "Apache-2.0",
		AnnotationVersion:  o.Version,
		AnnotationCreated:  o.Created.UTC().Format(time.RFC3339),
	}
	if o.Source != "" {
		a[AnnotationSource] = o.Source
	}
	if o.Revision != "" {
		a[AnnotationRevision] = o.Revision
	}
	return a
}

// Build returns the image index of o: one image per binary, each of one layer.
func Build(o Options) (v1.ImageIndex, error) {
	if len(o.Binaries) == 0 {
		return nil, errors.New("image: no binaries")
	}
	if o.Version == "" {
		return nil, errors.New("image: a version is required")
	}
	anns := o.Annotations()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for _, b := range o.Binaries {
		img, err := platformImage(o, b, anns)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", b.Platform, err)
		}
		p := b.Platform
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx = mutate.AppendManifests(idx, adds...)
	out, ok := mutate.Annotations(idx, anns).(v1.ImageIndex)
	if !ok {
		return nil, errors.New("image: annotated index is not an index")
	}
	return out, nil
}

// platformImage is the image of one binary.
func platformImage(o Options, b Binary, anns map[string]string) (v1.Image, error) {
	exe, err := os.ReadFile(b.Path)
	if err != nil {
		return nil, err
	}
	roots, err := CARoots()
	if err != nil {
		return nil, err
	}
	files := append(BaseFiles(roots), File{Name: strings.TrimPrefix(Entrypoint, "/"), Mode: 0o755, Data: exe})
	layer, err := Layer(files, o.Created)
	if err != nil {
		return nil, err
	}
	return NewImage(ImageSpec{
		Platform: b.Platform,
		Created:  o.Created,
		Layers: []LayerSpec{{
			Layer:     layer,
			CreatedBy: "hack/image (go build " + o.Version + ")",
			Comment:   "kubectl-onto, CA roots, passwd",
		}},
		Config: v1.Config{
			User:       User,
			Entrypoint: []string{Entrypoint},
			Env:        []string{"PATH=/", "HOME=" + Home, "SSL_CERT_FILE=" + CABundle},
			WorkingDir: "/",
			Labels:     anns,
		},
		Annotations: anns,
	})
}

// BaseFiles are what every image of the project's own programs holds besides the
// program: the CA roots, the passwd and group entries of root and the non-root user,
// the user's home and a /tmp, directories before what they hold. Layer sorts them
// with the program's file.
func BaseFiles(roots []byte) []File {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, GID, Home)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", GID)
	return []File{
		{Name: "etc/", Mode: 0o755},
		{Name: "etc/group", Mode: 0o644, Data: []byte(group)},
		{Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Name: "etc/ssl/", Mode: 0o755},
		{Name: "etc/ssl/certs/", Mode: 0o755},
		{Name: strings.TrimPrefix(CABundle, "/"), Mode: 0o644, Data: roots},
		{Name: "home/", Mode: 0o755},
		{Name: strings.TrimPrefix(Home, "/") + "/", Mode: 0o700, UID: UID, GID: GID},
		{Name: "tmp/", Mode: 0o1777},
	}
}

// CARoots are the CA roots of golang.org/x/crypto/x509roots/fallback (Mozilla's
// list as Go packages it), PEM-encoded in the module's order. Roots the module
// trusts only with a constraint (a distrust date) are left out: a PEM bundle cannot
// carry one, and trusting them without it would trust more than Go does.
func CARoots() ([]byte, error) {
	var buf bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	if buf.Len() == 0 {
		return nil, errors.New("no CA roots in golang.org/x/crypto/x509roots/fallback/bundle")
	}
	return buf.Bytes(), nil
}

// CompileOptions say how Compile builds the binaries.
type CompileOptions struct {
	// Go is the go command; "go" when empty.
	Go string
	// ModuleDir is the module's root, where the go command runs.
	ModuleDir string
	// Package is the main package; ./cmd/kubectl-onto when empty.
	Package string
	// Name is the binary's file name; kubectl-onto when empty.
	Name string
	// LDFlags are the linker flags (the Makefile's, with the version).
	LDFlags string
	// OutDir gets OS_ARCH/kubectl-onto per platform.
	OutDir string
	// Platforms; Platforms when nil.
	Platforms []v1.Platform
	// Stderr hears the go command's output; nothing when nil.
	Stderr io.Writer
}

// Compile builds a static kubectl-onto (or o.Package) for each platform, one after the other (the go
// command uses every core for one), with -trimpath and without VCS stamping so the
// bytes depend on the source, the flags and the toolchain only.
func Compile(ctx context.Context, o CompileOptions) ([]Binary, error) {
	goCmd, pkg, platforms, binName := o.Go, o.Package, o.Platforms, o.Name
	if binName == "" {
		binName = "kubectl-onto"
	}
	if goCmd == "" {
		goCmd = "go"
	}
	if pkg == "" {
		pkg = "./cmd/kubectl-onto"
	}
	if platforms == nil {
		platforms = Platforms
	}
	var out []Binary
	for _, p := range platforms {
		path := filepath.Join(o.OutDir, p.OS+"_"+p.Architecture, binName)
		cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags", o.LDFlags, "-o", path, pkg)
		cmd.Dir = o.ModuleDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
		// Its compilers with it: a cancelled build leaves none running.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		var msgs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &msgs, &msgs
		if o.Stderr != nil {
			cmd.Stdout, cmd.Stderr = io.MultiWriter(&msgs, o.Stderr), io.MultiWriter(&msgs, o.Stderr)
		}
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build for %s: %w\n%s", p, err, msgs.Bytes())
		}
		out = append(out, Binary{Platform: p, Path: path})
	}
	return out, nil
}

// WriteLayout writes idx as the OCI image layout dir, replacing what dir held: its
// index.json names idx by version (org.opencontainers.image.ref.name), as skopeo's
// oci:DIR:VERSION and crane's layout readers expect.
func WriteLayout(dir string, idx v1.ImageIndex, version string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{AnnotationRefName: version}))
}

// ReadLayout returns the image index WriteLayout wrote to dir.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: want one image index in index.json, found %d entries", dir, len(m.Manifests))
	}
	return root.ImageIndex(m.Manifests[0].Digest)
}

// Reference is ref with version as its tag when it has none (and no digest).
func Reference(ref, version string) (name.Reference, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if t, ok := r.(name.Tag); ok && !strings.Contains(last, ":") {
		return t.Context().Tag(version), nil
	}
	return r, nil
}

// Push writes idx, its images and their blobs to ref (a tag; version when ref has
// none), with the credentials of the docker config (~/.docker/config.json), and
// returns the index's reference by digest.
func Push(ctx context.Context, ref, version string, idx v1.ImageIndex, opts ...remote.Option) (name.Digest, error) {
	r, err := Reference(ref, version)
	if err != nil {
		return name.Digest{}, err
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.WriteIndex(r, idx, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", r, err)
	}
	h, err := idx.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return r.Context().Digest(h.String()), nil
}

// CompressedSize is what pulling img transfers: its manifest, config and layers.
func CompressedSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	size := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}
