/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// secretBytes of randomness per generated value: 192 bits.
const secretBytes = 24

// createGeneratedSecret creates a rendered Secret with a random value for each key its
// annotation lists. An existing Secret keeps every value it has: values are generated
// once and never rotated or read back; only keys it lacks (a newer release added
// them) get values.
func (a *Applier) createGeneratedSecret(ctx context.Context, obj *unstructured.Unstructured) error {
	var secret corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &secret); err != nil {
		return fmt.Errorf("convert secret: %w", err)
	}
	secrets := a.Clients.Kube.CoreV1().Secrets(secret.Namespace)
	values, err := generateValues(plan.GeneratedKeys(obj), plan.GeneratedFormats(obj))
	if err != nil {
		return err
	}
	secret.Data = values
	_, err = secrets.Create(ctx, &secret, metav1.CreateOptions{FieldManager: a.fieldManager()})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	live, err := secrets.Get(ctx, secret.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	missing := map[string][]byte{}
	for k, v := range values {
		if _, ok := live.Data[k]; !ok {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// The resourceVersion makes the patch fail rather than race another writer: a
	// value is set once.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": live.ResourceVersion}, "data": missing})
	if err != nil {
		return err
	}
	if _, err := secrets.Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.fieldManager()}); err != nil {
		// Never the patch or its values in the error.
		return fmt.Errorf("add %d generated keys to Secret %s: %s (HTTP %d)", len(missing), secret.Name, apierrors.ReasonForError(err), httpCode(err))
	}
	return nil
}

// generateValues makes a random value for each key, of its format in formats (a
// password when it has none).
func generateValues(keys []string, formats map[string]string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, key := range keys {
		v, err := generateValue(formats[key])
		if err != nil {
			return nil, fmt.Errorf("generate %s: %w", key, err)
		}
		out[key] = v
	}
	return out, nil
}

// httpCode is the HTTP status of an API error, 0 for others.
func httpCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}
