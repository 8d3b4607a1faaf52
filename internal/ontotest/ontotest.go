/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package ontotest holds the steps integration tests share to put a platform on the
// test cluster the way the CLI does: load an example file (validated and defaulted),
// render it, plan it and apply it.
package ontotest

import (
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/platform"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// ExamplePath is the path of examples/<name>, found from the test's working directory
// (any package directory of the module).
func ExamplePath(t testing.TB, name string) string {
	t.Helper()
	return testcluster.RepoFile(t, filepath.Join("examples", name))
}

// Example loads examples/<name> as the CLI does (validated, defaulted) and moves the
// platform into namespace ns. It sets spec.global.minReadySeconds to 0: the test
// cluster's pods (kwok) are Ready at once and never crash unasked, so the default 10 s
// would only add 10 s to every rollout a test waits for, per plane. A test about
// minReadySeconds sets its own value on the platform returned.
func Example(t testing.TB, name, ns string) *v1alpha1.OntoPlatform {
	t.Helper()
	v, err := spec.NewValidator(catalog(t))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := v.LoadFile(ExamplePath(t, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	p.Namespace = ns
	noMinReady := int32(0)
	p.Spec.Global.MinReadySeconds = &noMinReady
	return p
}

// Catalog is the default release catalog.
func Catalog(t testing.TB) *release.Catalog { return catalog(t) }

func catalog(t testing.TB) *release.Catalog {
	t.Helper()
	c, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Release is the default catalog's entry of version, as apply.Options.Release.
func Release(t testing.TB, version string) *release.Release {
	t.Helper()
	r, err := catalog(t).Get(version)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// Small keeps five components of the minimal example: postgres (a StatefulSet),
// ontology-service, data-service, nessie and gateway, over four planes. It is enough
// for most paths (plane order, a StatefulSet, Deployments, an upgrade's steps) in a
// fraction of the full example's time on the CI's two cores.
func Small(s *v1alpha1.OntoPlatformSpec) {
	off := func() *bool { b := false; return &b }
	s.Infrastructure.Kafka.Enabled, s.Infrastructure.Minio.Enabled, s.Infrastructure.Redis.Enabled = off(), off(), off()
	s.ControlPlane.SchemaRegistry.Enabled, s.ControlPlane.AuthService.Enabled = off(), off()
	s.IntelligencePlane.AgentRuntime.Enabled, s.IntelligencePlane.ReasoningService.Enabled = off(), off()
}

// SmallSpecYAML is Small as lines to append to the minimal example's spec, for tests
// that drive the built binary with a file.
const SmallSpecYAML = `  infrastructure:
    kafka: {enabled: false}
    minio: {enabled: false}
    redis: {enabled: false}
  controlPlane:
    schemaRegistry: {enabled: false}
    authService: {enabled: false}
  intelligencePlane:
    agentRuntime: {enabled: false}
    reasoningService: {enabled: false}
`

// Desired renders p, with the user's patches, with the release its version names.
func Desired(t testing.TB, p *v1alpha1.OntoPlatform, patches ...render.Patch) *plan.Desired {
	t.Helper()
	d, err := platform.Loaded{Platform: p, Release: *Release(t, p.Spec.Version), Patches: patches}.Desired()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ApplyOptions are apply's defaults for tests: 90 s per plane and a fixed lock holder.
func ApplyOptions() apply.Options {
	o := apply.DefaultOptions()
	o.PlaneTimeout = 90 * time.Second
	o.Holder = "test"
	return o
}

// Install plans and applies p through the library path the CLI uses, failing the test
// on any error.
func Install(t testing.TB, clients *kube.Clients, p *v1alpha1.OntoPlatform) {
	t.Helper()
	d := Desired(t, p)
	opts := ApplyOptions()
	opts.Release = Release(t, p.Spec.Version)
	if _, err := (&apply.Applier{Clients: clients, Now: time.Now}).Apply(t.Context(), d, opts); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

// InstallCRD installs the OntoPlatform CRD, or leaves it when the cluster serves it
// already, as apply does before a platform: for tests that create OntoPlatforms
// without applying one.
func InstallCRD(t testing.TB, clients *kube.Clients) {
	t.Helper()
	crd, err := plan.CRD()
	if err != nil {
		t.Fatal(err)
	}
	a := &apply.Applier{Clients: clients, FieldManager: plan.FieldManager, Now: time.Now}
	if _, err := a.ApplyCRD(t.Context(), crd, ApplyOptions()); err != nil {
		t.Fatalf("install the OntoPlatform CRD: %v", err)
	}
}

// InstallExample installs examples/<name> into a fresh namespace of the test cluster
// (skipping the test when there is none) and returns the cluster, clients and platform.
// The namespace exists before the install, as one a user made beforehand.
func InstallExample(t *testing.T, name string) (*testcluster.Cluster, *kube.Clients, *v1alpha1.OntoPlatform) {
	t.Helper()
	c := testcluster.New(t)
	clients, err := kube.New(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := Example(t, name, c.Namespace(t))
	Install(t, clients, p)
	return c, clients, p
}

// Live reads the OntoPlatform name in namespace from the cluster, typed, failing the
// test when it cannot.
func Live(t testing.TB, clients *kube.Clients, namespace, name string) *v1alpha1.OntoPlatform {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	obj.SetNamespace(namespace)
	ri, err := clients.Resource(obj)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var p v1alpha1.OntoPlatform
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}
