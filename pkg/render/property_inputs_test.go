/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// input is a platform a property test renders, with the release of its version.
type input struct {
	p   *v1alpha1.OntoPlatform
	rel release.Release
}

// exampleNames are the examples, each copied from examples/ to testdata/TestRender
// (TestExampleCopies keeps the copies equal).
func exampleNames() []string { return []string{"platform", "minimal", "tenant", "external"} }

// everyInput is every example (their copies in testdata/TestRender) and every profile
// `init` writes (from the embedded templates, filled as init fills them), by name.
func everyInput(t testing.TB) map[string]input {
	t.Helper()
	out := map[string]input{}
	for _, name := range exampleNames() {
		p, rel := load(t, filepath.Join("testdata", "TestRender", name+".yaml"))
		out["example/"+name] = input{p, rel}
	}
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	versions := catalog.Versions()
	profiles, err := fs.Glob(manifests.FS, path.Join(manifests.ProfilesDir, "*.yaml"))
	if err != nil || len(profiles) == 0 {
		t.Fatalf("profiles: %v (%d found)", err, len(profiles))
	}
	for _, f := range profiles {
		name := strings.TrimSuffix(path.Base(f), ".yaml")
		text, err := fs.ReadFile(manifests.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := template.New(name).Option("missingkey=error").Parse(string(text))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		data := map[string]string{"Name": "onto-" + name, "Namespace": "onto-" + name, "Version": versions[len(versions)-1], "File": name + ".yaml"}
		if err := tmpl.Execute(&buf, data); err != nil {
			t.Fatal(err)
		}
		ps, err := v.Load(name+".yaml", buf.Bytes())
		if err != nil {
			t.Fatalf("profile %s: %v", name, err)
		}
		rel, err := catalog.Get(ps[0].Spec.Version)
		if err != nil {
			t.Fatal(err)
		}
		out["profile/"+name] = input{ps[0], rel}
	}
	return out
}
