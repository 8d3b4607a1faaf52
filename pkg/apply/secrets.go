/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// secretBytes of randomness per generated value: 192 bits.
const secretBytes = 24

// createGeneratedSecret creates a rendered Secret with a random value for each key its
// annotation lists. An existing Secret is kept as it is: values are generated once and
// never rotated or read back.
func (a *Applier) createGeneratedSecret(ctx context.Context, obj *unstructured.Unstructured) error {
	var secret corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &secret); err != nil {
		return fmt.Errorf("convert secret: %w", err)
	}
	secret.Data = map[string][]byte{}
	for _, key := range strings.Split(obj.GetAnnotations()[render.AnnotationGenerateKeys], ",") {
		key = strings.TrimSpace(key)
		if key == "" {
			continue
		}
		buf := make([]byte, secretBytes)
		if _, err := rand.Read(buf); err != nil {
			return fmt.Errorf("generate %s: %w", key, err)
		}
		secret.Data[key] = []byte(base64.RawURLEncoding.EncodeToString(buf))
	}
	_, err := a.Clients.Kube.CoreV1().Secrets(secret.Namespace).Create(ctx, &secret, metav1.CreateOptions{FieldManager: a.fieldManager()})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
