/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

var (
	testNow  = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	testDNS  = []string{"postgres", "postgres.onto", "postgres.onto.svc", "postgres.onto.svc.cluster.local", "*.postgres-headless.onto.svc"}
	testName = "onto-ca"
)

func mustCA(t *testing.T) *Pair {
	t.Helper()
	ca, err := NewCA(testName, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestNewCA(t *testing.T) {
	ca := mustCA(t)
	c := ca.Cert
	if !c.IsCA || !c.MaxPathLenZero || c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("not a CA that signs leaves only: IsCA %v MaxPathLenZero %v KeyUsage %v", c.IsCA, c.MaxPathLenZero, c.KeyUsage)
	}
	if got := c.NotAfter.Sub(testNow); got != CAValidity {
		t.Errorf("CA valid for %v after now, want %v", got, CAValidity)
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("CA key is %T, want ECDSA P-256", c.PublicKey)
	}
	if !bytes.HasPrefix(ca.KeyPEM, []byte("-----BEGIN PRIVATE KEY-----")) {
		t.Error("key is not PEM PKCS #8")
	}
	parsed, err := ParseCA(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		t.Fatalf("ParseCA of a new CA: %v", err)
	}
	if !parsed.Cert.Equal(c) {
		t.Error("ParseCA returned another certificate")
	}
}

func TestNewLeafChainsToCA(t *testing.T) {
	ca := mustCA(t)
	leaf, err := NewLeaf(ca, testDNS, testNow)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, name := range []string{"postgres.onto.svc", "postgres-1.postgres-headless.onto.svc", "postgres"} {
		if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, CurrentTime: testNow.Add(time.Hour)}); err != nil {
			t.Errorf("leaf does not verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "redis.onto.svc", CurrentTime: testNow}); err == nil {
		t.Error("leaf verifies for a name it was not issued for")
	}
	if got := leaf.Cert.NotAfter.Sub(testNow); got != LeafValidity {
		t.Errorf("leaf valid for %v after now, want %v", got, LeafValidity)
	}
	if leaf.Cert.IsCA {
		t.Error("leaf is a CA")
	}
	if leaf.Cert.Subject.CommonName != testDNS[0] {
		t.Errorf("common name %q, want %q", leaf.Cert.Subject.CommonName, testDNS[0])
	}
	// A leaf cannot sign: a CA of max path length 0 refuses any certificate below it.
	other, err := NewLeaf(&Pair{Cert: leaf.Cert, key: leaf.key}, []string{"x"}, testNow)
	if err == nil {
		if _, err := other.Cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: testNow}); err == nil {
			t.Error("a certificate signed by a leaf chains to the CA")
		}
	}
}

func TestNewLeafEndsWithCA(t *testing.T) {
	ca := mustCA(t)
	late := testNow.Add(CAValidity - 24*time.Hour)
	leaf, err := NewLeaf(ca, testDNS, late)
	if err != nil {
		t.Fatal(err)
	}
	if !leaf.Cert.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("leaf ends %v, past its CA's end %v", leaf.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestParseCAErrorsHoldNoKeyMaterial(t *testing.T) {
	ca := mustCA(t)
	leaf, err := NewLeaf(ca, testDNS, testNow)
	if err != nil {
		t.Fatal(err)
	}
	other := mustCA(t)
	tests := []struct {
		name          string
		cert, key     []byte
		wantSubstring string
	}{
		{"not PEM", []byte("garbage"), ca.KeyPEM, "no PEM certificate"},
		{"leaf as CA", leaf.CertPEM, leaf.KeyPEM, "not a CA"},
		{"bad key", ca.CertPEM, []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"), "not a PEM private key"},
		{"key of another CA", ca.CertPEM, other.KeyPEM, "does not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCA(tc.cert, tc.key)
			if err == nil || !strings.Contains(err.Error(), tc.wantSubstring) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantSubstring)
			}
			for _, secret := range [][]byte{ca.KeyPEM, other.KeyPEM, leaf.KeyPEM, []byte("PRIVATE KEY"), []byte("AAAA")} {
				if bytes.Contains([]byte(err.Error()), secret) {
					t.Errorf("error %q holds key material", err)
				}
			}
		})
	}
}

func TestReissueReason(t *testing.T) {
	ca := mustCA(t)
	leaf, err := NewLeaf(ca, testDNS, testNow)
	if err != nil {
		t.Fatal(err)
	}
	otherCA := mustCA(t)
	end := leaf.Cert.NotAfter
	tests := []struct {
		name string
		ca   *Pair
		dns  []string
		now  time.Time
		want string // substring; "" for none
	}{
		{"fresh", ca, testDNS, testNow, ""},
		{"names in another order", ca, []string{testDNS[4], testDNS[3], testDNS[2], testDNS[1], testDNS[0]}, testNow, ""},
		{"31 days left", ca, testDNS, end.Add(-31 * 24 * time.Hour), ""},
		{"29 days left", ca, testDNS, end.Add(-29 * 24 * time.Hour), "expires on"},
		{"expired", ca, testDNS, end.Add(time.Hour), "expired on"},
		{"name added", ca, append(append([]string{}, testDNS...), "postgres-read"), testNow, "DNS names"},
		{"service renamed", ca, []string{"pg", "pg.onto", "pg.onto.svc", "pg.onto.svc.cluster.local", "*.postgres-headless.onto.svc"}, testNow, "DNS names"},
		{"another CA", otherCA, testDNS, testNow, "not signed by the platform CA"},
		{"CA unknown", nil, testDNS, testNow, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var caCert *x509.Certificate
			if tc.ca != nil {
				caCert = tc.ca.Cert
			}
			got := ReissueReason(leaf.Cert, caCert, tc.dns, tc.now)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("ReissueReason = %q, want %q", got, tc.want)
			}
		})
	}
}
