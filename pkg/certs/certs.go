/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package certs issues the certificates of TLS between a platform's services: a
// platform CA and serving certificates signed by it, ECDSA P-256, and decides when a
// serving certificate must be issued again. It is pure crypto over PEM bytes and a
// clock the caller passes: it reads and writes nothing, and no error it returns holds
// key material.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Validity and renewal of the certificates.
const (
	// CAValidity is long: replacing the CA means re-issuing every certificate and
	// restarting every pod at once.
	CAValidity = 10 * 365 * 24 * time.Hour
	// LeafValidity of a serving certificate, re-issued by apply long before it ends.
	LeafValidity = 365 * 24 * time.Hour
	// RenewBefore is how long before its end a serving certificate is re-issued: a
	// month leaves room for an apply (or the watch's pass) to run in time.
	RenewBefore = 30 * 24 * time.Hour
	// backdate covers clocks of nodes a little behind the one that issued.
	backdate = 5 * time.Minute
)

// Keys of a certificate Secret (type kubernetes.io/tls): the certificate and key under
// the type's own keys, and the CA's certificate under the key cert-manager uses, so a
// pod mounts its own Secret alone to serve and to verify its peers. KeyCombined is the
// key followed by the certificate in one file, for servers that read them so (Kafka's
// PEM key store), under the name of cert-manager's CombinedPEM output.
const (
	KeyCert     = "tls.crt"
	KeyKey      = "tls.key"
	KeyCA       = "ca.crt"
	KeyCombined = "tls-combined.pem"
)

// Pair is a certificate and its private key, as PEM.
type Pair struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
	key     *ecdsa.PrivateKey
}

// NewCA issues a self-signed CA certificate named commonName, valid from now for
// CAValidity.
func NewCA(commonName string, now time.Time) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// The CA signs serving certificates only, never another CA.
		MaxPathLenZero: true,
	}
	return sign(tmpl, tmpl, key, key)
}

// NewLeaf issues a serving certificate for dnsNames (the first is its common name),
// signed by ca, valid from now for LeafValidity but never past the CA's own end.
func NewLeaf(ca *Pair, dnsNames []string, now time.Time) (*Pair, error) {
	if ca == nil || ca.key == nil {
		return nil, errors.New("issue certificate: no CA key")
	}
	if len(dnsNames) == 0 {
		return nil, errors.New("issue certificate: no DNS names")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(LeafValidity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     slices.Clone(dnsNames),
		NotBefore:    now.Add(-backdate),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Client auth too: the same certificate lets a service authenticate to another
		// (Kafka's inter-broker SSL, Postgres replication) where mutual TLS is asked.
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	return sign(tmpl, ca.Cert, key, ca.key)
}

// sign creates the certificate of tmpl signed by the parent's key and returns it with
// its own key, as PEM.
func sign(tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) (*Pair, error) {
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	parsed, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("parse certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	// PKCS #8, not SEC 1: every server of the platform reads it (OpenSSL, Go, and
	// Kafka, whose PEM key store takes PKCS #8 only).
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key of %q: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: keyutil.PrivateKeyBlockType, Bytes: der})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: certDER})
	return &Pair{Cert: parsed, CertPEM: certPEM, KeyPEM: keyPEM, key: key}, nil
}

// serialNumber is a random 128-bit serial, as RFC 5280 recommends for unpredictability.
func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	return n, nil
}

// ParseCA reads a CA certificate and its key, checking that they belong together and
// that the certificate is a CA. Errors say what is wrong, never what the bytes hold.
func ParseCA(certPEM, keyPEM []byte) (*Pair, error) {
	c, err := ParseCertificate(certPEM)
	if err != nil {
		return nil, err
	}
	if !c.IsCA {
		return nil, errors.New("the certificate is not a CA")
	}
	parsed, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, errors.New("the key is not a PEM private key")
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("the key is not an ECDSA key")
	}
	if !key.PublicKey.Equal(c.PublicKey) {
		return nil, errors.New("the key does not match the certificate")
	}
	return &Pair{Cert: c, CertPEM: certPEM, KeyPEM: keyPEM, key: key}, nil
}

// ParseCertificate reads the first certificate of PEM data.
func ParseCertificate(certPEM []byte) (*x509.Certificate, error) {
	cs, err := cert.ParseCertsPEM(certPEM)
	if err != nil || len(cs) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return cs[0], nil
}

// ReissueReason says why leaf must be issued again, or "" when it may stay: it does
// not chain to ca (a CA that changed), it ends within RenewBefore of now, or its DNS
// names are not exactly dnsNames (a service renamed, a name added). ca may be nil when
// the caller does not know it (a plan before the CA exists); the chain is then not
// checked.
func ReissueReason(leaf, ca *x509.Certificate, dnsNames []string, now time.Time) string {
	if ca != nil {
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil && now.Before(leaf.NotAfter) {
			return "it is not signed by the platform CA"
		}
	}
	if left := leaf.NotAfter.Sub(now); left < RenewBefore {
		if left <= 0 {
			return "it expired on " + leaf.NotAfter.UTC().Format(time.DateOnly)
		}
		return "it expires on " + leaf.NotAfter.UTC().Format(time.DateOnly)
	}
	want, have := slices.Sorted(slices.Values(dnsNames)), slices.Sorted(slices.Values(leaf.DNSNames))
	if !slices.Equal(want, have) {
		return "its DNS names differ from the service's"
	}
	return ""
}
