/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// TestExampleCopies: the copies of the examples the render tests read are the
// examples users read.
func TestExampleCopies(t *testing.T) {
	for _, name := range exampleNames() {
		example, err := os.ReadFile(filepath.Join("..", "..", "examples", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		copied, err := os.ReadFile(filepath.Join("testdata", "TestRender", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(example, copied) {
			t.Errorf("testdata/TestRender/%s.yaml differs from examples/%[1]s.yaml: copy it again", name)
		}
	}
}

// TestExternalBackingServices: with a backing service external, nothing of it is
// rendered (no workload, Service, Secret, PDB, ConfigMap, or NetworkPolicy admitting
// clients to it), and every service that uses it by the catalog gets the given
// address, port and TLS setting in its ConfigMap and its credentials from the user's
// Secret, by the keys the spec names; services that do not use it get neither.
func TestExternalBackingServices(t *testing.T) {
	tests := []struct {
		backing string
		ext     v1alpha1.ExternalServiceSpec
		// settings the users' ConfigMaps must hold.
		settings map[string]string
		// env are the variables the users read from the user's Secret, as "secret/key".
		env map[string]string
	}{
		{
			backing: v1alpha1.ComponentPostgres,
			ext: v1alpha1.ExternalServiceSpec{Host: "db.example.com", Port: 6432, TLS: true, Database: "ontology",
				CredentialsSecretRef: &v1alpha1.ExternalCredentialsRef{Name: "user-db"}},
			settings: map[string]string{"POSTGRES_HOST": "db.example.com", "POSTGRES_PORT": "6432", "POSTGRES_DB": "ontology", "POSTGRES_SSLMODE": "require"},
			env:      map[string]string{"POSTGRES_USER": "user-db/username", "POSTGRES_PASSWORD": "user-db/password"},
		},
		{
			backing: v1alpha1.ComponentRedis,
			ext: v1alpha1.ExternalServiceSpec{Host: "10.1.2.3",
				CredentialsSecretRef: &v1alpha1.ExternalCredentialsRef{Name: "user-cache", PasswordKey: "auth-token"}},
			settings: map[string]string{"REDIS_MODE": "standalone", "REDIS_ADDR": "10.1.2.3:6379", "REDIS_TLS": "false"},
			env:      map[string]string{"REDIS_PASSWORD": "user-cache/auth-token"},
		},
		{
			backing:  v1alpha1.ComponentKafka,
			ext:      v1alpha1.ExternalServiceSpec{Host: "fd00::9", TLS: true},
			settings: map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "[fd00::9]:9092", "KAFKA_SECURITY_PROTOCOL": "SSL"},
		},
		{
			backing: v1alpha1.ComponentMinio,
			ext: v1alpha1.ExternalServiceSpec{Host: "s3.example.com", TLS: true,
				CredentialsSecretRef: &v1alpha1.ExternalCredentialsRef{Name: "user-s3", UsernameKey: "AWS_ACCESS_KEY_ID", PasswordKey: "AWS_SECRET_ACCESS_KEY"}},
			settings: map[string]string{"MINIO_ENDPOINT": "s3.example.com:443", "MINIO_SECURE": "true"},
			env:      map[string]string{"MINIO_ACCESS_KEY": "user-s3/AWS_ACCESS_KEY_ID", "MINIO_SECRET_KEY": "user-s3/AWS_SECRET_ACCESS_KEY"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.backing, func(t *testing.T) {
			p, rel := production(t)
			c, _ := p.Spec.Component(tc.backing)
			*c.Stateful = v1alpha1.StatefulComponentSpec{External: &tc.ext}
			if tc.backing == v1alpha1.ComponentRedis {
				p.Spec.Infrastructure.Redis.Mode = v1alpha1.RedisStandalone
			}
			p.Spec.Tenancy.NetworkPolicy.Egress = true
			objs := mustRender(t, p, rel)

			for _, u := range objs {
				name := u.GetLabels()[LabelName]
				if name == tc.backing || (tc.backing == v1alpha1.ComponentMinio && name == minioSetup) ||
					(tc.backing == v1alpha1.ComponentRedis && name == v1alpha1.ComponentRedisSentinel) {
					t.Errorf("%s %s of the external %s is rendered", u.GetKind(), u.GetName(), tc.backing)
				}
				if u.GetKind() == "NetworkPolicy" && u.GetName() == p.Name+"-allow-"+tc.backing {
					t.Errorf("NetworkPolicy %s admits clients to pods that do not exist", u.GetName())
				}
			}

			users := 0
			for id, tpl := range podTemplates(t, objs) {
				component := tpl.Labels[LabelName]
				comp, ok := p.Spec.Component(component)
				if !ok || comp.Service == nil {
					continue
				}
				uses, err := rel.Uses(component)
				if err != nil {
					t.Fatal(err)
				}
				usesIt := slices.Contains(uses, tc.backing)
				if usesIt {
					users++
				}
				data := templateConfig(t, objs, tpl)
				for k, want := range tc.settings {
					got, has := data[k]
					switch {
					case usesIt && got != want:
						t.Errorf("%s: %s = %q, want %q", id, k, got, want)
					case !usesIt && has:
						t.Errorf("%s: does not use %s but has %s", id, tc.backing, k)
					}
				}
				got := map[string]string{}
				for _, e := range tpl.Spec.Containers[0].Env {
					if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
						got[e.Name] = r.SecretKeyRef.Name + "/" + r.SecretKeyRef.Key
					}
				}
				for k, want := range tc.env {
					if usesIt && got[k] != want {
						t.Errorf("%s: %s from %q, want %q", id, k, got[k], want)
					}
					if !usesIt && got[k] != "" {
						t.Errorf("%s: does not use %s but reads %s from %s", id, tc.backing, k, got[k])
					}
				}
				if usesIt && tc.backing == v1alpha1.ComponentPostgres && data["POSTGRES_USER"] != "" {
					t.Errorf("%s: POSTGRES_USER %q in the ConfigMap; an external user comes from the Secret", id, data["POSTGRES_USER"])
				}
			}
			if users == 0 {
				t.Fatalf("no service uses %s: the case proves nothing", tc.backing)
			}
			checkExternalEgress(t, p, rel, objs, tc.backing, &tc.ext)
		})
	}
}

// checkExternalEgress: with egress denied, one policy lets exactly the users of the
// external service connect to its port, to any address, and to nothing else.
func checkExternalEgress(t *testing.T, p *v1alpha1.OntoPlatform, rel release.Release, objs []*unstructured.Unstructured, backing string, ext *v1alpha1.ExternalServiceSpec) {
	t.Helper()
	var found *networkingv1.NetworkPolicy
	for _, np := range networkPoliciesOf(t, objs) {
		if np.Name == p.Name+"-allow-egress-external-"+backing {
			found = &np
		}
	}
	if found == nil {
		t.Fatalf("no egress allowance to the external %s", backing)
	}
	if len(found.Spec.Egress) != 1 || len(found.Spec.Egress[0].To) != 0 {
		t.Fatalf("%s: egress %+v, want one rule to any address", found.Name, found.Spec.Egress)
	}
	ports := found.Spec.Egress[0].Ports
	if len(ports) != 1 || int32(ports[0].Port.IntValue()) != externalPort(backing, ext) || *ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("%s: ports %+v, want TCP %d only", found.Name, ports, externalPort(backing, ext))
	}
	for _, c := range p.Spec.Components() {
		if c.Service == nil || !c.Enabled() {
			continue
		}
		uses, err := rel.Uses(c.Name)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Contains(uses, backing)
		labels := map[string]string{LabelName: c.Name, LabelInstance: p.Name, LabelPartOf: PartOf}
		if got := matches(t, &found.Spec.PodSelector, labels); got != want {
			t.Errorf("%s selects %s: %v, want %v", found.Name, c.Name, got, want)
		}
	}
}

// templateConfig is the data of the ConfigMap a pod template's main container reads.
func templateConfig(t *testing.T, objs []*unstructured.Unstructured, tpl corev1.PodTemplateSpec) map[string]string {
	t.Helper()
	for _, ef := range tpl.Spec.Containers[0].EnvFrom {
		if ef.ConfigMapRef != nil {
			cm := find(objs, "ConfigMap", ef.ConfigMapRef.Name)
			if cm == nil {
				t.Fatalf("ConfigMap %s is not rendered", ef.ConfigMapRef.Name)
			}
			data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
			return data
		}
	}
	t.Fatal("the main container reads no ConfigMap")
	return nil
}

// TestExternalServicesKeepTheirOwnTLS: with tlsEnabled, the platform's CA verifies the
// services it runs, not an external one: a service using the external Postgres gets no
// PGSSLMODE or PGSSLROOTCERT of the platform's CA, while one using the in-cluster Kafka
// still verifies it against the CA.
func TestExternalServicesKeepTheirOwnTLS(t *testing.T) {
	p, rel := load(t, filepath.Join("testdata", "TestRender", "external.yaml"))
	p.Spec.Global.TLSEnabled = true
	objs := mustRender(t, p, rel)
	checked := 0
	for id, tpl := range podTemplates(t, objs) {
		comp, ok := p.Spec.Component(tpl.Labels[LabelName])
		if !ok || comp.Service == nil {
			continue
		}
		uses, err := rel.Uses(comp.Name)
		if err != nil {
			t.Fatal(err)
		}
		data := templateConfig(t, objs, tpl)
		if slices.Contains(uses, v1alpha1.ComponentPostgres) {
			checked++
			for _, k := range []string{"PGSSLMODE", "PGSSLROOTCERT"} {
				if v, ok := data[k]; ok {
					t.Errorf("%s uses the external Postgres yet has %s=%s", id, k, v)
				}
			}
			if data["POSTGRES_SSLMODE"] != "require" {
				t.Errorf("%s: POSTGRES_SSLMODE %q, want require (external.tls)", id, data["POSTGRES_SSLMODE"])
			}
		}
		if slices.Contains(uses, v1alpha1.ComponentKafka) && data["KAFKA_SECURITY_PROTOCOL"] != "SSL" {
			t.Errorf("%s: KAFKA_SECURITY_PROTOCOL %q for the in-cluster Kafka, want SSL", id, data["KAFKA_SECURITY_PROTOCOL"])
		}
	}
	if checked == 0 {
		t.Fatal("no service uses the external Postgres")
	}
}
