/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/manifests"
)

// edit changes one file of the bases; it fails the test unless old is in the file.
type edit struct {
	file, old, new string
}

// basesWith are the embedded bases with edits applied in order.
func basesWith(t *testing.T, edits ...edit) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(manifests.FS, manifests.BaseDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(manifests.FS, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		f := m[manifests.BaseDir+"/"+e.file]
		if f == nil || !strings.Contains(string(f.Data), e.old) {
			t.Fatalf("base %s has no %q", e.file, e.old)
		}
		f.Data = []byte(strings.Replace(string(f.Data), e.old, e.new, 1))
	}
	return m
}

// renderWith renders the production example, with TLS on and metrics off (so every
// kind of patch applies: mounts, probes, env, deleted ports), over bases.
func renderWith(t *testing.T, bases fs.FS) ([]*unstructured.Unstructured, error) {
	t.Helper()
	p, rel := production(t)
	p.Spec.Global.TLSEnabled = true
	p.Spec.Observability.Metrics.Enabled = ptr.To(false)
	r, err := newRenderer(bases, manifests.BaseDir)
	if err != nil {
		t.Fatal(err)
	}
	planes, err := r.Render(p, Options{Release: rel})
	return Objects(planes), err
}

// itemOf is the item of the list at path of u whose field key is value.
func itemOf(t *testing.T, u *unstructured.Unstructured, key string, value any, path ...string) map[string]any {
	t.Helper()
	items, _, _ := unstructured.NestedSlice(u.Object, path...)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m[key] == value {
			return m
		}
	}
	t.Fatalf("%s %s: no item %s=%v in %s", u.GetKind(), u.GetName(), key, value, strings.Join(path, "."))
	return nil
}

// listKeys are the values of field key of the items of the list at path of u.
func listKeys(u *unstructured.Unstructured, key string, path ...string) []any {
	items, _, _ := unstructured.NestedSlice(u.Object, path...)
	var out []any
	for _, it := range items {
		out = append(out, it.(map[string]any)[key])
	}
	return out
}

// TestPatchesFollowNamesNotPositions reorders the bases' lists (a sidecar before the
// service's container, a volume before its volumes, the ports to delete first) and
// checks that every patch still changes the item it names, and only that one: the
// main containers render exactly as over the shipped bases, the sidecar untouched.
func TestPatchesFollowNamesNotPositions(t *testing.T) {
	want, err := renderWith(t, manifests.FS)
	if err != nil {
		t.Fatal(err)
	}
	metricsPort := "  - name: metrics\n    port: 9091\n    targetPort: metrics\n    protocol: TCP\n    appProtocol: http\n"
	got, err := renderWith(t, basesWith(t,
		edit{"service/deployment.yaml", "      containers:\n", "      containers:\n      - name: sidecar\n        image: sidecar\n        env:\n        - name: SIDE\n          value: car\n"},
		edit{"service/deployment.yaml", "      volumes:\n", "      volumes:\n      - name: scratch\n        emptyDir: {}\n"},
		edit{"service/service.yaml", metricsPort, ""},
		edit{"service/service.yaml", "  ports:\n", "  ports:\n" + metricsPort},
		edit{"kafka/statefulset.yaml", "        - name: controller\n          containerPort: 9093\n          protocol: TCP\n", ""},
		edit{"kafka/statefulset.yaml", "        ports:\n", "        ports:\n        - name: controller\n          containerPort: 9093\n          protocol: TCP\n"},
		edit{"kafka/services.yaml", "  - name: controller\n    port: 9093\n    targetPort: controller\n    protocol: TCP\n", ""},
		edit{"kafka/services.yaml", "  ports:\n", "  ports:\n  - name: controller\n    port: 9093\n    targetPort: controller\n    protocol: TCP\n"},
	))
	if err != nil {
		t.Fatal(err)
	}
	containers := []string{"spec", "template", "spec", "containers"}

	gw := find(got, "Deployment", "gateway")
	if keys := listKeys(gw, "name", containers...); !reflect.DeepEqual(keys, []any{"sidecar", "gateway"}) {
		t.Errorf("gateway containers = %v, want the sidecar, then gateway", keys)
	}
	main := itemOf(t, gw, "name", "gateway", containers...)
	if wantMain := itemOf(t, find(want, "Deployment", "gateway"), "name", "gateway", containers...); !reflect.DeepEqual(main, wantMain) {
		t.Errorf("gateway container over the reordered base:\n%v\nwant, as over the shipped base:\n%v", main, wantMain)
	}
	sidecar := itemOf(t, gw, "name", "sidecar", containers...)
	if !reflect.DeepEqual(sidecar, map[string]any{"name": "sidecar", "image": "sidecar", "env": []any{map[string]any{"name": "SIDE", "value": "car"}}}) {
		t.Errorf("sidecar patched: %v", sidecar)
	}
	// The strategic merge puts the patch's items first, then the base's in their order.
	if keys := listKeys(gw, "name", "spec", "template", "spec", "volumes"); !reflect.DeepEqual(keys, []any{tlsVolume, "scratch", "tmp"}) {
		t.Errorf("gateway volumes = %v, want the certificate's, then the base's in order", keys)
	}
	if keys := listKeys(find(got, "Service", "gateway"), "name", "spec", "ports"); !reflect.DeepEqual(keys, []any{"http", "grpc"}) {
		t.Errorf("gateway Service ports = %v, want http and grpc: only the metrics port deleted", keys)
	}

	kafka := find(got, "StatefulSet", "kafka")
	if ports := listKeys(&unstructured.Unstructured{Object: itemOf(t, kafka, "name", "kafka", containers...)}, "name", "ports"); !reflect.DeepEqual(ports, []any{"kafka"}) {
		t.Errorf("kafka container ports = %v, want kafka: only the controller port deleted", ports)
	}
	if ports := listKeys(find(got, "Service", "kafka-headless"), "name", "spec", "ports"); !reflect.DeepEqual(ports, []any{"kafka"}) {
		t.Errorf("kafka-headless ports = %v, want kafka: only the controller port deleted", ports)
	}
}

// TestPatchOfAMissingItemFails renames a base's main container (a port, a claim): a patch by the
// old name finds nothing, and the render must fail naming the object and container
// rather than patch another container or add one.
func TestPatchOfAMissingItemFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit edit
		want string
	}{
		{"stateful", edit{"redis/statefulset.yaml", "      - name: redis\n", "      - name: redis-server\n"}, `redis: patch StatefulSet redis: .spec.template.spec.containers: no item of name redis`},
		{"service", edit{"service/deployment.yaml", "      - name: service\n", "      - name: app\n"}, `gateway: patch Deployment service: .spec.template.spec.containers: no item of name service`},
		{"port to delete", edit{"kafka/services.yaml", "    port: 9093\n", "    port: 9094\n"}, `kafka: patch Service kafka-headless: .spec.ports: no item of port 9093 to delete`},
		{"claim", edit{"minio/statefulset.yaml", "      name: data\n    spec:", "      name: store\n    spec:"}, `minio: patch StatefulSet minio: .spec.volumeClaimTemplates: no item of metadata.name data`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderWith(t, basesWith(t, tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Render error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
