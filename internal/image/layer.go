//go:build unix

/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a layer: a directory when Name ends in "/", a symbolic link
// when Symlink is set, else a regular file holding Data.
type File struct {
	// Name is the path in the image, without a leading "/".
	Name     string
	Mode     int64
	UID, GID int
	Data     []byte
	Symlink  string
}

// LayerTar is the uncompressed tar of files, sorted by name (so a directory comes
// before what it holds, and the same files give the same bytes whatever their order),
// every timestamp created, in the PAX format. Names must be unique.
func LayerTar(files []File, created time.Time) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if f.Name == "" || strings.HasPrefix(f.Name, "/") {
			return nil, fmt.Errorf("layer: bad name %q", f.Name)
		}
		// A directory and a file (or link) of one name: extracted, one replaces the other.
		key := strings.TrimSuffix(f.Name, "/")
		if seen[key] {
			return nil, fmt.Errorf("layer: %s twice", key)
		}
		seen[key] = true
		h := &tar.Header{
			Name: f.Name, Mode: f.Mode, Uid: f.UID, Gid: f.GID, ModTime: created.UTC(),
			Typeflag: tar.TypeReg, Size: int64(len(f.Data)), Format: tar.FormatPAX,
		}
		switch {
		case strings.HasSuffix(f.Name, "/"):
			h.Typeflag, h.Size = tar.TypeDir, 0
		case f.Symlink != "":
			h.Typeflag, h.Size, h.Linkname = tar.TypeSymlink, 0, f.Symlink
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Layer is the OCI layer (gzip, default level) of files, as LayerTar writes them.
func Layer(files []File, created time.Time) (v1.Layer, error) {
	data, err := LayerTar(files, created)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
}

// LayerSpec is one layer of an image and its history entry.
type LayerSpec struct {
	Layer              v1.Layer
	CreatedBy, Comment string
}

// ImageSpec is everything that goes into a single-platform image's bytes.
type ImageSpec struct {
	Platform v1.Platform
	// Created is every timestamp of the image.
	Created time.Time
	Layers  []LayerSpec
	// Config is the runtime configuration: user, entrypoint, env, labels, ...
	Config v1.Config
	// Annotations of the manifest.
	Annotations map[string]string
}

// NewImage is the OCI image of s (OCI media types; no author; every time s.Created).
func NewImage(s ImageSpec) (v1.Image, error) {
	created := v1.Time{Time: s.Created.UTC()}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, l := range s.Layers {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     l.Layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: created, CreatedBy: l.CreatedBy, Comment: l.Comment},
		})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	p := s.Platform
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	cf.Created = created
	cf.Author = ""
	cf.Config = s.Config
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	if len(s.Annotations) == 0 {
		return img, nil
	}
	out, ok := mutate.Annotations(img, s.Annotations).(v1.Image)
	if !ok {
		return nil, errors.New("annotated image is not an image")
	}
	return out, nil
}
