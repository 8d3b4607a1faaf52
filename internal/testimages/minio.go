/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testimages

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/mod/modfile"

	"github.com/coomia-dip/kubectl-onto/internal/image"
)

// MinioModule is the Go module of the MinIO server, pinned by the tool module
// hack/testimages/minio; its version is the image's tag.
const MinioModule = "github.com/minio/minio"

// MinioVersion is the MinIO version the tool module pins.
func MinioVersion(moduleDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(moduleDir, "hack/testimages/minio/go.mod"))
	if err != nil {
		return "", err
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Mod.Path == MinioModule {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("hack/testimages/minio/go.mod requires no %s", MinioModule)
}

// MinioClientModule is mc, which the minio-setup Job runs from MinIO's image; pinned by
// the tool module hack/testimages/mc.
const MinioClientModule = "github.com/minio/mc"

// minio: the server and mc built from their modules, with busybox (the setup Job's
// script runs under sh), the CA roots, and user 1000 as the rendered pods run.
func (b *Builder) minio(ctx context.Context) ([]Tagged, error) {
	version, err := MinioVersion(b.ModuleDir)
	if err != nil {
		return nil, err
	}
	exe, err := b.compile(ctx, "hack/testimages/minio", MinioModule, "minio", "-s -w")
	if err != nil {
		return nil, err
	}
	mc, err := b.compile(ctx, "hack/testimages/mc", MinioClientModule, "mc", "-s -w")
	if err != nil {
		return nil, err
	}
	pins, err := debianPins("redis")
	if err != nil {
		return nil, err
	}
	var bb []Pin
	for _, p := range pins {
		if p.Package == "busybox-static" {
			bb = append(bb, p)
		}
	}
	debs, err := fetchDebs(ctx, filepath.Join(b.CacheDir, "debs"), bb, b.Stderr)
	if err != nil {
		return nil, err
	}
	files := map[string]image.File{}
	for _, p := range bb {
		if err := extractDeb(ctx, debs[p.Package], files); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"bin", "sbin", "lib", "lib64"} {
		files[d] = image.File{Name: d, Mode: 0o777, Symlink: "usr/" + d}
	}
	for _, a := range busyboxApplets {
		files["usr/bin/"+a] = image.File{Name: "usr/bin/" + a, Mode: 0o777, Symlink: "busybox"}
	}
	roots, err := image.CARoots()
	if err != nil {
		return nil, err
	}
	for _, f := range append(userFiles("minio", 1000, "/tmp"),
		image.File{Name: "usr/bin/minio", Mode: 0o755, Data: exe},
		image.File{Name: "usr/bin/mc", Mode: 0o755, Data: mc},
		image.File{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: roots},
		image.File{Name: "data/", Mode: 0o755, UID: 1000, GID: 1000},
		image.File{Name: "tmp/", Mode: 0o1777},
	) {
		files[f.Name] = f
	}
	addParents(files)
	tag := strings.TrimPrefix(version, "v")
	cfg := v1.Config{
		User: "1000:1000", Entrypoint: []string{"minio"}, Cmd: []string{"server", "/data"},
		// mc looks its home up (with getent, which busybox lacks) when HOME is unset;
		// /tmp is what the pods can write (an emptyDir).
		Env:          []string{"PATH=" + debianPath, "HOME=/tmp"},
		ExposedPorts: map[string]struct{}{"9000/tcp": {}, "9001/tcp": {}}, Labels: labels("minio", tag),
	}
	img, err := oneLayerImage(slices.Collect(maps.Values(files)), "go build "+MinioModule+"@"+version+" "+MinioClientModule, cfg)
	if err != nil {
		return nil, err
	}
	return []Tagged{{Name: "minio", Tag: tag, Image: img}}, nil
}
