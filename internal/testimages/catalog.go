/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testimages

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// ImageRegistry is the spec.global.imageRegistry of a platform that runs the test
// images: the platform services' images are ImageRegistry/sample-service:VERSION.
const ImageRegistry = RegistryHost + "/" + Repository

// SampleService is the catalog name of every platform service in the test catalog:
// one program stands in for all of them.
const SampleService = "sample-service"

// Infrastructure images of the test catalog, by component; Kafka keeps the shipped
// image (none can be built here: cover it through spec.infrastructure.kafka.external).
func infrastructureImages(minioTag string) map[string]string {
	out := map[string]string{
		"postgres":       ImageRegistry + "/postgres:" + PostgresTag,
		"redis":          ImageRegistry + "/redis:" + RedisTag,
		"redis-sentinel": ImageRegistry + "/redis:" + RedisTag,
	}
	if minioTag != "" {
		out["minio"] = ImageRegistry + "/minio:" + minioTag
	}
	return out
}

// TestRelease is the test catalog's entry of a shipped release: the same version,
// upgrade range and uses, every platform service the sample service (by name, so
// under the platform's imageRegistry; pinned to a misbehaving variant when modes names
// one for it), the infrastructure the test images.
func TestRelease(shipped release.Release, minioTag string, modes map[string]string) (release.Release, error) {
	r := shipped
	r.Components = map[string]release.ComponentImage{}
	infra := infrastructureImages(minioTag)
	for name, c := range shipped.Components {
		switch {
		case c.Name != "":
			c.Name = SampleService
			if mode := modes[name]; mode != "" {
				if !slices.Contains(SampleModes, mode) {
					return release.Release{}, fmt.Errorf("%s: mode %q is not one of the images' (%s)", name, mode, strings.Join(SampleModes, ", "))
				}
				c.Name, c.Image = "", ImageRegistry+"/"+SampleService+":"+SampleTag(shipped.Version, mode)
			}
		case infra[name] != "":
			c.Image = infra[name]
		}
		r.Components[name] = c
	}
	for name := range modes {
		if _, ok := shipped.Components[name]; !ok {
			return release.Release{}, fmt.Errorf("release %s has no component %s", shipped.Version, name)
		}
	}
	return r, nil
}

// MarshalRelease is the catalog file of r, with a header saying where it comes from.
func MarshalRelease(r release.Release) ([]byte, error) {
	data, err := yaml.Marshal(r)
	if err != nil {
		return nil, err
	}
	header := "# Test catalog entry of platform version " + r.Version + ": the shipped entry (manifests/releases)\n" +
		"# with the images the tests on real nodes run (internal/testimages). Written by\n" +
		"# go run ./hack/testimages -catalog DIR; use with --releases DIR and\n" +
		"# spec.global.imageRegistry: " + ImageRegistry + ". Kafka keeps the shipped image:\n" +
		"# no Kafka image is built here (use spec.infrastructure.kafka.external).\n"
	return append([]byte(header), data...), nil
}

// WriteCatalog writes the test catalog entry of every shipped release into dir, the
// services in modes (component to mode) pinned to that misbehaving variant.
func WriteCatalog(dir, moduleDir string, modes map[string]string) error {
	shipped, err := release.Default()
	if err != nil {
		return err
	}
	minioTag := ""
	if v, err := MinioVersion(moduleDir); err == nil {
		minioTag = strings.TrimPrefix(v, "v")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, v := range shipped.Versions() {
		r, err := shipped.Get(v)
		if err != nil {
			return err
		}
		tr, err := TestRelease(r, minioTag, modes)
		if err != nil {
			return err
		}
		data, err := MarshalRelease(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, v+".yaml"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ImageRefs are the references (under RegistryHost) of every image a test catalog
// entry names, sorted.
func ImageRefs(r release.Release, registry string) []string {
	set := map[string]bool{}
	for name := range r.Components {
		ref, err := r.Image(name, registry, "")
		if err == nil && strings.HasPrefix(ref, RegistryHost+"/") {
			set[ref] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
