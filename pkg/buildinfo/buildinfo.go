/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package buildinfo reports the version of this build of kubectl-onto.
package buildinfo

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is set at link time by the Makefile (-X ...buildinfo.Version=...). It is a
// variable only because the linker can set nothing else; nothing assigns it at run time.
var Version = ""

// DocsURL is where the pages of docs/ are published; a message that needs more than a
// line points at one of them (DocsURL + "/permissions.md"). Not the README: its
// manual moved to docs/.
const DocsURL = "https://github.com/coomia-dip/kubectl-onto/blob/main/docs"

// DefaultImageRepository is where the images of kubectl-onto's releases are
// published (make image-push), each tagged with its version.
const DefaultImageRepository = "ghcr.io/coomia-dip/kubectl-onto"

// ImageRepository is the repository of this build's image; a build for another
// registry sets it at link time (make IMAGE_REPO=..., -X ...buildinfo.ImageRepository).
var ImageRepository = DefaultImageRepository

// ImageDigest is the digest of this version's image index (sha256:...), when the
// build knows it: a release pushes the image (make image-push), then links the
// CLI with the digest it printed (make IMAGE_DIGEST=sha256:..., -X
// ...buildinfo.ImageDigest). A binary cannot carry the digest of the image it is in.
var ImageDigest = ""

// Info describes this build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// Image runs this version in a cluster (watch install's default); empty when
	// the build knows none.
	Image string `json:"image,omitempty"`
}

// Get returns this build's version: the linker's, else the module version that
// `go install` recorded, else "dev".
func Get() Info {
	v := Version
	if v == "" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			v = "dev"
		}
	}
	return Info{Version: v, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Image: Image(ImageRepository, v, ImageDigest)}
}

var (
	tagPattern    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// Image is the reference of the image of version in repository: repository:version,
// with @digest when digest is one. Without a digest, "" when no published image can
// have that tag: a dev build, a build from a modified tree (a -dirty version), a
// version that is no valid tag, or no repository.
func Image(repository, version, digest string) string {
	if repository == "" {
		return ""
	}
	tagged := tagPattern.MatchString(version) && version != "dev" && !strings.HasSuffix(version, "-dirty")
	switch {
	case digestPattern.MatchString(digest) && tagged:
		return repository + ":" + version + "@" + digest
	case digestPattern.MatchString(digest):
		return repository + "@" + digest
	case tagged:
		return repository + ":" + version
	}
	return ""
}
