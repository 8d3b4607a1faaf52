/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

func TestUserPatches(t *testing.T) {
	tests := []struct {
		name    string
		patches []Patch
		check   func(t *testing.T, objs []*unstructured.Unstructured)
		wantErr string
	}{
		{
			name: "strategic merge",
			patches: []Patch{{Patch: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
spec:
  template:
    metadata:
      annotations:
        example.com/team: edge
    spec:
      containers:
      - name: gateway
        env:
        - name: EXTRA
          value: "1"
`}},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				tpl := podTemplates(t, objs)["Deployment/gateway"]
				if tpl.Annotations["example.com/team"] != "edge" {
					t.Error("annotation not patched")
				}
				found := false
				for _, e := range tpl.Spec.Containers[0].Env {
					found = found || (e.Name == "EXTRA" && e.Value == "1")
				}
				if !found || len(tpl.Spec.Containers[0].Env) < 2 {
					t.Errorf("env not merged: %+v", tpl.Spec.Containers[0].Env)
				}
			},
		},
		{
			// A patched generated ConfigMap gets a new content hash, and the pods that
			// read it follow, so the change rolls them like any config change.
			name: "configmap data rolls the pods",
			patches: []Patch{{
				Target: &PatchTarget{Kind: "ConfigMap", Name: "gateway-config-.*"},
				Patch:  `[{"op": "add", "path": "/data/EXTRA_FLAG", "value": "on"}]`,
			}},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				var cm *unstructured.Unstructured
				for _, u := range objs {
					if u.GetKind() == "ConfigMap" && strings.HasPrefix(u.GetName(), "gateway-config-") {
						cm = u
					}
				}
				if cm == nil || cm.Object["data"].(map[string]any)["EXTRA_FLAG"] != "on" {
					t.Fatalf("gateway ConfigMap not patched: %v", cm)
				}
				p, rel := production(t)
				for _, u := range mustRender(t, p, rel) {
					if u.GetKind() == "ConfigMap" && u.GetName() == cm.GetName() {
						t.Fatalf("patched ConfigMap kept the unpatched name %s", cm.GetName())
					}
				}
				ref := podTemplates(t, objs)["Deployment/gateway"].Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name
				if ref != cm.GetName() {
					t.Fatalf("gateway reads ConfigMap %s, want the patched %s", ref, cm.GetName())
				}
			},
		},
		{
			name: "json6902 with a label-selected target",
			patches: []Patch{{
				Target: &PatchTarget{Kind: "StatefulSet", LabelSelector: LabelName + "=postgres"},
				Patch:  `[{"op": "replace", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 120}]`,
			}},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if got := *podTemplates(t, objs)["StatefulSet/postgres"].Spec.TerminationGracePeriodSeconds; got != 120 {
					t.Errorf("terminationGracePeriodSeconds = %d, want 120", got)
				}
			},
		},
		{
			name: "a patch that renames keeps the object in its plane",
			patches: []Patch{{
				Target: &PatchTarget{Kind: "Ingress", Name: "gateway"},
				Patch:  `[{"op": "replace", "path": "/metadata/name", "value": "public"}]`,
			}},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if find(objs, "Ingress", "public") == nil {
					t.Error("Ingress not renamed")
				}
			},
		},
		{name: "empty patch", patches: []Patch{{Patch: " "}}, wantErr: "user patch 0 is empty"},
		{
			name:    "patch of an object that does not exist",
			patches: []Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nope\n"}},
			wantErr: "user patch 0: the platform renders no Deployment nope",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			planes, err := Render(p, Options{Release: rel, Patches: tc.patches})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, Objects(planes))
		})
	}
}

func TestRenderIsDeterministicAndPure(t *testing.T) {
	p, rel := production(t)
	before := p.DeepCopy()
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for range 3 {
		planes, err := r.Render(p, Options{Release: rel})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, toYAML(t, planes))
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Fatalf("render %d differs from the first:\n%s", i, cmp.Diff(string(outs[0]), string(outs[i])))
		}
	}
	if diff := cmp.Diff(before, p); diff != "" {
		t.Errorf("Render changed the platform (-before +after):\n%s", diff)
	}
}

func TestPlaneOrder(t *testing.T) {
	p, rel := production(t)
	planes, err := Render(p, Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	var got []v1alpha1.Plane
	for _, pl := range planes {
		got = append(got, pl.Name)
	}
	if diff := cmp.Diff(v1alpha1.Planes(), got); diff != "" {
		t.Errorf("planes (-want +got):\n%s", diff)
	}
	for _, pl := range planes {
		for i := 1; i < len(pl.Objects); i++ {
			if less(pl.Objects[i], pl.Objects[i-1]) {
				t.Errorf("plane %s: %s/%s before %s/%s", pl.Name, pl.Objects[i-1].GetKind(), pl.Objects[i-1].GetName(), pl.Objects[i].GetKind(), pl.Objects[i].GetName())
			}
		}
	}
}

func TestMetricsAndIngressSwitches(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *v1alpha1.OntoPlatformSpec)
		check  func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{
			name:   "metrics off: no ServiceMonitor, no metrics port",
			mutate: func(s *v1alpha1.OntoPlatformSpec) { s.Observability.Metrics.Enabled = ptr.To(false) },
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if find(objs, "ServiceMonitor", "onto-production") != nil {
					t.Error("ServiceMonitor rendered with metrics disabled")
				}
				for _, p := range convert[corev1.Service](t, find(objs, "Service", "gateway")).Spec.Ports {
					if p.Name == "metrics" {
						t.Error("gateway Service still has a metrics port")
					}
				}
			},
		},
		{
			name: "ingress class and TLS secret from the spec",
			mutate: func(s *v1alpha1.OntoPlatformSpec) {
				s.Gateway.Ingress.ClassName = "nginx"
				s.Gateway.Ingress.TLSSecretName = "platform-cert"
			},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				in := find(objs, "Ingress", "gateway")
				class, _, _ := unstructured.NestedString(in.Object, "spec", "ingressClassName")
				tls, _, _ := unstructured.NestedSlice(in.Object, "spec", "tls")
				if class != "nginx" || len(tls) != 1 || tls[0].(map[string]any)["secretName"] != "platform-cert" {
					t.Errorf("ingress class %q, tls %v", class, tls)
				}
			},
		},
		{
			name:   "ingress disabled",
			mutate: func(s *v1alpha1.OntoPlatformSpec) { s.Gateway.Ingress.Enabled = false },
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if find(objs, "Ingress", "gateway") != nil {
					t.Error("Ingress rendered while disabled")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			tc.mutate(&p.Spec)
			tc.check(t, mustRender(t, p, rel))
		})
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(p *v1alpha1.OntoPlatform, rel *release.Release)
		wantErr string
	}{
		{
			name:    "release of another version",
			mutate:  func(_ *v1alpha1.OntoPlatform, rel *release.Release) { rel.Version = "9.9.9" },
			wantErr: `release "9.9.9" does not match spec.version "1.5.0"`,
		},
		{
			name: "release without the component's image",
			mutate: func(_ *v1alpha1.OntoPlatform, rel *release.Release) {
				c := map[string]release.ComponentImage{}
				for k, v := range rel.Components {
					if k != v1alpha1.ComponentNessie {
						c[k] = v
					}
				}
				rel.Components = c
			},
			wantErr: "component nessie (spec.dataPlane.nessie): release 1.5.0 has no entry for component nessie",
		},
		{
			// A release from a revision snapshot recorded before the catalog named uses:
			// rendering it would hand the service no credential, or every one.
			name: "release entry without uses",
			mutate: func(_ *v1alpha1.OntoPlatform, rel *release.Release) {
				c := maps.Clone(rel.Components)
				nessie := c[v1alpha1.ComponentNessie]
				nessie.Uses = nil
				c[v1alpha1.ComponentNessie] = nessie
				rel.Components = c
			},
			wantErr: "component nessie (spec.dataPlane.nessie): release 1.5.0 names no uses for component nessie",
		},
		{
			name:    "no namespace",
			mutate:  func(p *v1alpha1.OntoPlatform, _ *release.Release) { p.Namespace = "" },
			wantErr: "metadata.namespace",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, rel := production(t)
			tc.mutate(p, &rel)
			_, err := Render(p, Options{Release: rel})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func BenchmarkRender(b *testing.B) {
	p, rel := production(b)
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(p, Options{Release: rel}); err != nil {
			b.Fatal(err)
		}
	}
}
