/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// kafkaClusterIDBytes is the size of a Kafka Uuid.
const kafkaClusterIDBytes = 16

// generateValue makes one random value of format: a password (format "") or a
// KRaft cluster id.
func generateValue(format string) ([]byte, error) {
	switch format {
	case "":
		buf := make([]byte, secretBytes)
		if _, err := rand.Read(buf); err != nil {
			return nil, err
		}
		return []byte(base64.RawURLEncoding.EncodeToString(buf)), nil
	case v1alpha1.GenerateFormatKafkaClusterID:
		return kafkaClusterID()
	default:
		// A release newer than this binary: refuse rather than store a value of the
		// wrong form, which a component would take once and keep.
		return nil, fmt.Errorf("unknown format %q (this kubectl-onto is older than the release)", format)
	}
}

// kafkaClusterID is a random KRaft cluster id: 16 bytes, base64url without padding,
// 22 characters, as kafka-storage random-uuid prints. As Kafka's Uuid.randomUuid, it
// redraws the two reserved ids (all zeros, and 1, the metadata topic's) and an id that
// starts with "-", which a command line would take for an option.
func kafkaClusterID() ([]byte, error) {
	zero := make([]byte, kafkaClusterIDBytes)
	one := append(make([]byte, kafkaClusterIDBytes-1), 1)
	buf := make([]byte, kafkaClusterIDBytes)
	for {
		if _, err := rand.Read(buf); err != nil {
			return nil, err
		}
		id := base64.RawURLEncoding.EncodeToString(buf)
		if !bytes.Equal(buf, zero) && !bytes.Equal(buf, one) && id[0] != '-' {
			return []byte(id), nil
		}
	}
}
