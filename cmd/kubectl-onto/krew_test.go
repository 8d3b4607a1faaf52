/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
)

// krewPlugin is the part of krew's Plugin manifest (krew.googlecontainertools.github.com/v1alpha2)
// that hack/dist.sh writes. Decoding is strict, so a misspelt field fails the test.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

// TestKrewManifest builds the release archive of this machine's platform with
// hack/dist.sh (what `make dist` runs for all four), and checks the krew manifest
// against it as krew would install it: the checksum, the files, and that the installed
// plugin runs, reports the manifest's version, and completes through
// kubectl_complete-onto.
func TestKrewManifest(t *testing.T) {
	mustrun.SkipIfShort(t, "builds a release archive")
	goCmd, err := exec.LookPath("go")
	if err != nil {
		mustrun.Skipf(t, "no go command on PATH")
	}
	for _, tool := range []string{"bash", "sh", "tar", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			mustrun.Skipf(t, "hack/dist.sh needs %s", tool)
		}
	}
	dist := t.TempDir()
	script := exec.CommandContext(t.Context(), "bash", filepath.Join("..", "..", "hack", "dist.sh"))
	script.Env = append(os.Environ(),
		"GO="+goCmd, "ONTO_DIST_DIR="+dist, "ONTO_DIST_PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH)
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("hack/dist.sh: %v\n%s", err, out)
	}

	data, err := os.ReadFile(filepath.Join(dist, "onto.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m krewPlugin
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatalf("onto.yaml: %v\n%s", err, data)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "onto" {
		t.Errorf("manifest is %s %s %q, want krew.googlecontainertools.github.com/v1alpha2 Plugin \"onto\"", m.APIVersion, m.Kind, m.Metadata.Name)
	}
	version := m.Spec.Version
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(version, "v")); err != nil || !strings.HasPrefix(version, "v") {
		t.Errorf("spec.version %q is not v<semver> as krew requires: %v", version, err)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Description == "" || !strings.HasPrefix(m.Spec.Homepage, "https://") {
		t.Errorf("shortDescription %q, description %q, homepage %q: all required", m.Spec.ShortDescription, m.Spec.Description, m.Spec.Homepage)
	}
	if len(m.Spec.Platforms) != 1 {
		t.Fatalf("%d platforms, want the one built", len(m.Spec.Platforms))
	}
	p := m.Spec.Platforms[0]
	if want := map[string]string{"os": runtime.GOOS, "arch": runtime.GOARCH}; !maps.Equal(p.Selector.MatchLabels, want) {
		t.Errorf("selector %v, want matchLabels %v", p.Selector.MatchLabels, want)
	}
	archive := fmt.Sprintf("kubectl-onto_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	if want := "https://github.com/coomia-dip/kubectl-onto/releases/download/" + version + "/" + archive; p.URI != want {
		t.Errorf("uri %s, want %s", p.URI, want)
	}

	sum := fileSHA256(t, filepath.Join(dist, path.Base(p.URI)))
	if p.Sha256 != sum {
		t.Errorf("manifest sha256 %s, archive's %s", p.Sha256, sum)
	}
	checksums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := sum + "  " + archive + "\n"; string(checksums) != want {
		t.Errorf("checksums.txt is %q, want %q", checksums, want)
	}

	// Install as krew does: unpack, then copy each files entry into the install dir.
	unpacked, installed := t.TempDir(), t.TempDir()
	untarGz(t, filepath.Join(dist, archive), unpacked)
	for _, f := range p.Files {
		matches, _ := filepath.Glob(filepath.Join(unpacked, f.From))
		if len(matches) == 0 {
			t.Fatalf("files: %q is not in the archive", f.From)
		}
		for _, src := range matches {
			copyFile(t, src, filepath.Join(installed, f.To, filepath.Base(src)))
		}
	}
	bin := filepath.Join(installed, p.Bin)
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("bin %s is not an installed executable: %v", p.Bin, err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", p.Bin, err)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version != version {
		t.Errorf("the installed plugin reports version %q (%v), want the manifest's %s", v.Version, err, version)
	}

	// kubectl runs kubectl_complete-onto from PATH, beside the plugin.
	complete := exec.CommandContext(t.Context(), filepath.Join(installed, "kubectl_complete-onto"), "pl")
	complete.Env = append(os.Environ(), "PATH="+installed+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err = complete.Output()
	if err != nil || !strings.HasPrefix(string(out), "plan\t") || !strings.HasSuffix(string(out), "\n:4\n") {
		t.Errorf("kubectl_complete-onto pl: %v, printed %q, want plan and directive 4", err, out)
	}
}

func fileSHA256(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// untarGz unpacks the regular files of a .tar.gz into dir, with their modes.
func untarGz(t *testing.T, name, dir string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(h.Name) {
			t.Fatalf("archive entry %s: want only regular files at the top", h.Name)
		}
		out, err := os.OpenFile(filepath.Join(dir, h.Name), os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&0o777)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, st.Mode()); err != nil {
		t.Fatal(err)
	}
}
