/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package buildinfo

import "testing"

// TestImage: the image of a version, by tag, by digest when known, none for a build
// no published image can match.
func TestImage(t *testing.T) {
	const repo = "ghcr.io/coomia-dip/kubectl-onto"
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ repo, version, digest, want string }{
		{repo, "v0.4.0", "", repo + ":v0.4.0"},
		{repo, "v0.4.0-3-ga2506ca", "", repo + ":v0.4.0-3-ga2506ca"},
		{repo, "v0.4.0", digest, repo + ":v0.4.0@" + digest},
		{repo, "dev", "", ""},
		{repo, "a2506ca-dirty", "", ""},
		{repo, "a2506ca-dirty", digest, repo + "@" + digest},
		{repo, "v1.0.0+meta", "", ""},
		{repo, "v0.4.0", "sha256:short", repo + ":v0.4.0"},
		{"", "v0.4.0", digest, ""},
		{"registry.example:5000/onto", "v0.4.0", "", "registry.example:5000/onto:v0.4.0"},
	} {
		if got := Image(tc.repo, tc.version, tc.digest); got != tc.want {
			t.Errorf("Image(%q, %q, %q) = %q, want %q", tc.repo, tc.version, tc.digest, got, tc.want)
		}
	}
	if DefaultImageRepository != repo || ImageRepository != repo {
		t.Errorf("the repository is %q (default %q), want %q", ImageRepository, DefaultImageRepository, repo)
	}
}
