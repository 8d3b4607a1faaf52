/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// exampleSnapshot is the snapshot of examples/<name> as apply would record it: its
// spec as stored on the OntoPlatform (plan.Desired's Platform) and its release.
func exampleSnapshot(t *testing.T, name string, patches ...v1alpha1.Patch) Snapshot {
	t.Helper()
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := v.LoadFile(filepath.Join("..", "..", "examples", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	p.Spec.Patches = patches
	rel, err := catalog.Get(p.Spec.Version)
	if err != nil {
		t.Fatal(err)
	}
	d, err := plan.NewDesired(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSnapshot(d.Platform, rel)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotRoundTrip(t *testing.T) {
	gateway := v1alpha1.Patch{
		Target: &v1alpha1.PatchTarget{Kind: "Deployment", Name: "gateway"},
		Patch:  `[{"op": "replace", "path": "/spec/minReadySeconds", "value": 10}]`,
	}
	tests := []struct {
		name    string
		example string
		patches []v1alpha1.Patch
	}{
		{name: "minimal", example: "minimal.yaml"},
		{name: "production with a stored patch", example: "platform.yaml", patches: []v1alpha1.Patch{gateway}},
		{name: "tenant", example: "tenant.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := exampleSnapshot(t, tc.example, tc.patches...)
			data, err := EncodeSnapshot(want)
			if err != nil {
				t.Fatal(err)
			}
			again, err := EncodeSnapshot(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, again) {
				t.Error("two encodings of one snapshot differ")
			}
			got, err := DecodeSnapshot(data)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got.Digest, "sha256:") {
				t.Errorf("digest %q", got.Digest)
			}
			want.Digest = got.Digest
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("decoded snapshot (-want +got):\n%s", diff)
			}
			// What a later issue does with it: render the revision again.
			p := got.Platform("onto-x", "onto-ns")
			if _, err := render.Render(p, render.Options{Release: got.Release}); err != nil {
				t.Errorf("render the snapshot: %v", err)
			}
		})
	}
}

// TestSnapshotDigest: a snapshot changed after it was encoded is refused, and the
// error never quotes the content.
func TestSnapshotDigest(t *testing.T) {
	const secretish = "registry.internal.example/team-secret-path"
	base := exampleSnapshot(t, "minimal.yaml")
	base.Spec.Global.ImageRegistry = secretish
	tests := []struct {
		name   string
		tamper func(m map[string]any)
		// wantDigestErr is whether the error is ErrSnapshotDigest (rather than a
		// malformed snapshot).
		wantDigestErr bool
		wantErr       string
	}{
		{name: "untouched", tamper: func(map[string]any) {}},
		{name: "spec edited", tamper: func(m map[string]any) {
			m["spec"].(map[string]any)["version"] = "9.9.9"
		}, wantDigestErr: true},
		{name: "image of the release edited", tamper: func(m map[string]any) {
			m["release"].(map[string]any)["components"].(map[string]any)["postgres"] = map[string]any{"image": "evil/postgres:1"}
		}, wantDigestErr: true},
		{name: "a field this version does not know", tamper: func(m map[string]any) {
			m["spec"].(map[string]any)["futureField"] = true
		}, wantErr: `unknown field "futureField"`},
		{name: "digest replaced", tamper: func(m map[string]any) {
			m["digest"] = "sha256:0000"
		}, wantDigestErr: true},
		{name: "digest removed", tamper: func(m map[string]any) {
			delete(m, "digest")
		}, wantErr: "no digest"},
		{name: "wrong type", tamper: func(m map[string]any) {
			m["spec"] = "a string"
		}, wantErr: "decode snapshot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodeSnapshot(base)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			if err := json.Unmarshal(gunzip(t, data), &m); err != nil {
				t.Fatal(err)
			}
			tc.tamper(m)
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeSnapshot(gzipped(t, raw))
			switch {
			case !tc.wantDigestErr && tc.wantErr == "":
				if err != nil {
					t.Fatalf("untouched snapshot refused: %v", err)
				}
				return
			case err == nil:
				t.Fatal("tampered snapshot accepted")
			case tc.wantDigestErr && !errors.Is(err, ErrSnapshotDigest):
				t.Errorf("error %v is not ErrSnapshotDigest", err)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q lacks %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), secretish) {
				t.Errorf("error quotes the snapshot's content: %v", err)
			}
		})
	}
	t.Run("not gzip", func(t *testing.T) {
		if _, err := DecodeSnapshot([]byte(`{"spec":{}}`)); err == nil || !strings.Contains(err.Error(), "not gzip") {
			t.Errorf("error = %v, want one saying not gzip", err)
		}
	})
}

// TestSnapshotGolden records the decoded JSON of the minimal example's snapshot, the
// format later runs read back: a change to it shows up as a diff to review.
func TestSnapshotGolden(t *testing.T) {
	data, err := EncodeSnapshot(exampleSnapshot(t, "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, gunzip(t, data), "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteString("\n")
	golden.Assert(t, pretty.Bytes(), filepath.Join("testdata", "TestSnapshotGolden", "minimal.golden"))
}

func TestRevisionSecretName(t *testing.T) {
	if got := RevisionSecretName("onto-production", 12); got != "onto-production-rev-12" {
		t.Errorf("RevisionSecretName = %q", got)
	}
}

func TestNewSnapshotRefusesAnotherRelease(t *testing.T) {
	s := exampleSnapshot(t, "minimal.yaml")
	d, err := plan.NewDesired(s.Platform("onto-x", "onto-ns"), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := s.Release
	other.Version = "9.9.9"
	if _, err := newSnapshot(d.Platform, other); err == nil || !strings.Contains(err.Error(), "does not match spec.version") {
		t.Errorf("error = %v, want a version mismatch", err)
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSnapshotBeforeUses: a snapshot recorded before the release catalog named each
// service's uses (its digest computed without them) still decodes, and renders with
// its version's shipped uses, so an upgrade from it or a rollback to it works.
func TestSnapshotBeforeUses(t *testing.T) {
	old := exampleSnapshot(t, "minimal.yaml")
	components := map[string]release.ComponentImage{}
	for name, img := range old.Release.Components {
		img.Uses = nil
		components[name] = img
	}
	old.Release.Components = components
	data, err := EncodeSnapshot(old)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSnapshot(data)
	if err != nil {
		t.Fatalf("decode a snapshot without uses: %v", err)
	}
	if uses, err := got.Release.Uses("nessie"); err != nil || len(uses) == 0 {
		t.Errorf("nessie uses = %v, %v; want the shipped catalog's", uses, err)
	}
	if _, err := render.Render(got.Platform("onto-x", "onto-ns"), render.Options{Release: got.Release}); err != nil {
		t.Errorf("render the snapshot: %v", err)
	}
}
