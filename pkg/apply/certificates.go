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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/pkg/certs"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// issueCertificate writes a rendered certificate Secret: the platform CA is created
// once and kept from then on (every certificate the pods trust descends from it); a
// serving certificate is created, signed by the CA, and issued again only when
// certs.ReissueReason says so, so re-running apply writes nothing. No certificate or
// key is ever in an error or a log.
func (a *Applier) issueCertificate(ctx context.Context, obj *unstructured.Unstructured) error {
	var secret corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &secret); err != nil {
		return fmt.Errorf("convert secret: %w", err)
	}
	secrets := a.Clients.Kube.CoreV1().Secrets(secret.Namespace)
	now := a.now()
	if plan.IsCertificateAuthority(obj) {
		ca, err := certs.NewCA(secret.Namespace+"/"+secret.Name, now)
		if err != nil {
			return err
		}
		secret.Data = map[string][]byte{certs.KeyCert: ca.CertPEM, certs.KeyKey: ca.KeyPEM, certs.KeyCA: ca.CertPEM}
		_, err = secrets.Create(ctx, &secret, metav1.CreateOptions{FieldManager: a.fieldManager()})
		if apierrors.IsAlreadyExists(err) {
			return nil // kept: replacing a CA would break every pod's trust at once
		}
		return secretWriteError("create", secret.Name, err)
	}

	issuer := plan.CertificateIssuer(obj)
	caSecret, err := secrets.Get(ctx, issuer, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the platform CA Secret %s does not exist: apply creates it in the tenancy plane, before any certificate it signs", issuer)
	}
	if err != nil {
		return fmt.Errorf("read the platform CA Secret %s: %w", issuer, err)
	}
	ca, err := certs.ParseCA(caSecret.Data[certs.KeyCert], caSecret.Data[certs.KeyKey])
	if err != nil {
		return fmt.Errorf("the platform CA Secret %s cannot sign: %w; delete it for apply to issue a new CA, which re-issues every certificate", issuer, err)
	}
	dnsNames := plan.CertificateDNSNames(obj)
	live, err := secrets.Get(ctx, secret.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		leaf, err := certs.NewLeaf(ca, dnsNames, now)
		if err != nil {
			return fmt.Errorf("issue the certificate of Secret %s: %w", secret.Name, err)
		}
		secret.Data = leafData(leaf, ca)
		_, err = secrets.Create(ctx, &secret, metav1.CreateOptions{FieldManager: a.fieldManager()})
		return secretWriteError("create", secret.Name, err)
	case err != nil:
		return fmt.Errorf("read Secret %s: %w", secret.Name, err)
	}
	if reason := liveReissueReason(live, ca, dnsNames, now); reason == "" {
		return nil
	}
	leaf, err := certs.NewLeaf(ca, dnsNames, now)
	if err != nil {
		return fmt.Errorf("issue the certificate of Secret %s: %w", secret.Name, err)
	}
	// A merge patch of the data alone (the watch may patch, never update): the
	// resourceVersion makes it fail rather than race another writer, and whatever
	// else others set on the Secret stays.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": live.ResourceVersion}, "data": leafData(leaf, ca)})
	if err != nil {
		return fmt.Errorf("re-issue the certificate of Secret %s: encode the patch", secret.Name)
	}
	_, err = secrets.Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.fieldManager()})
	return secretWriteError("re-issue the certificate of", secret.Name, err)
}

// liveReissueReason is certs.ReissueReason of a live Secret, which may hold no
// certificate at all.
func liveReissueReason(live *corev1.Secret, ca *certs.Pair, dnsNames []string, now time.Time) string {
	leaf, err := certs.ParseCertificate(live.Data[certs.KeyCert])
	if err != nil {
		return "it holds no certificate"
	}
	return certs.ReissueReason(leaf, ca.Cert, dnsNames, now)
}

// leafData is the data of a serving certificate Secret: the certificate and key (also
// as one file), and the CA's certificate, so a pod that mounts its own Secret also
// verifies its peers.
func leafData(leaf, ca *certs.Pair) map[string][]byte {
	return map[string][]byte{
		certs.KeyCert:     leaf.CertPEM,
		certs.KeyKey:      leaf.KeyPEM,
		certs.KeyCA:       ca.CertPEM,
		certs.KeyCombined: append(append([]byte{}, leaf.KeyPEM...), leaf.CertPEM...),
	}
}

// secretWriteError names the Secret and the API's reason, never the request: the
// error of a write may quote the object it was given, values included.
func secretWriteError(verb, name string, err error) error {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return fmt.Errorf("%s Secret %s: %w", verb, name, err)
	}
	return fmt.Errorf("%s Secret %s: %s (HTTP %d)", verb, name, apierrors.ReasonForError(err), httpCode(err))
}
