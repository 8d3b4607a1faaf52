/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testimages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/mod/modfile"

	"github.com/coomia-dip/kubectl-onto/internal/image"
)

// KafkaModule is franz-go's kfake, the in-memory Kafka-protocol broker the kafka
// image runs (hack/testimages/kafka, which pins it); its version is the image's tag.
// No Kafka these machines can reach runs here, so the tests cover Kafka through
// spec.infrastructure.kafka.external pointed at a pod of this image; the rendered
// Kafka StatefulSet (the apache/kafka image's configuration contract, KRaft, its
// volumes) stays unverified on real nodes.
const KafkaModule = "github.com/twmb/franz-go/pkg/kfake"

// KafkaPort is the port the broker listens on and advertises.
const KafkaPort = 9092

// KafkaVersion is the kfake version the tool module pins.
func KafkaVersion(moduleDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(moduleDir, "hack/testimages/kafka/go.mod"))
	if err != nil {
		return "", err
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Mod.Path == KafkaModule {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("hack/testimages/kafka/go.mod requires no %s", KafkaModule)
}

// kafka: the broker alone, static, as user 1000. It advertises
// $ONTO_KAFKA_ADVERTISED_HOST:9092; give it the pod's IP (status.podIP).
func (b *Builder) kafka(ctx context.Context) ([]Tagged, error) {
	version, err := KafkaVersion(b.ModuleDir)
	if err != nil {
		return nil, err
	}
	exe, err := b.compile(ctx, "hack/testimages/kafka", ".", "kafka-fake", "-s -w")
	if err != nil {
		return nil, err
	}
	files := []image.File{{Name: "usr/", Mode: 0o755}, {Name: "usr/bin/", Mode: 0o755}, {Name: "usr/bin/kafka-fake", Mode: 0o755, Data: exe}}
	tag := strings.TrimPrefix(version, "v")
	cfg := v1.Config{
		User: "1000:1000", Entrypoint: []string{"/usr/bin/kafka-fake"},
		ExposedPorts: map[string]struct{}{fmt.Sprintf("%d/tcp", KafkaPort): {}}, Labels: labels("kafka", tag),
	}
	img, err := oneLayerImage(files, "go build "+KafkaModule+"@"+version, cfg)
	if err != nil {
		return nil, err
	}
	return []Tagged{{Name: "kafka", Tag: tag, Image: img}}, nil
}
