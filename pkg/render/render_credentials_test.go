/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// Secret keys each backing service hands to the platform services that use it, as the
// issue defines them (written out here, not taken from the renderer, so the test can
// disagree with it). Kafka has none: its address is all a client needs.
var credentialsOfBacking = map[string][]string{
	v1alpha1.ComponentPostgres: {"postgres/password"},
	v1alpha1.ComponentRedis:    {"redis/password"},
	v1alpha1.ComponentMinio:    {"minio-service-credentials/access-key", "minio-service-credentials/secret-key"},
	v1alpha1.ComponentKafka:    nil,
}

// Prefixes of the connection settings of each backing service in a service's ConfigMap.
var settingsOfBacking = map[string]string{
	v1alpha1.ComponentPostgres: "POSTGRES_",
	v1alpha1.ComponentRedis:    "REDIS_",
	v1alpha1.ComponentMinio:    "MINIO_",
	v1alpha1.ComponentKafka:    "KAFKA_",
}

// Secret keys of each infrastructure workload: its own, and nobody else's.
var credentialsOfInfrastructure = map[string][]string{
	// The replication user's password: the primary's initdb script sets it, standbys
	// copy the primary with it.
	"StatefulSet/" + v1alpha1.ComponentPostgres:      {"postgres/password", "postgres/replication-password"},
	"StatefulSet/" + v1alpha1.ComponentRedis:         {"redis/password"},
	"StatefulSet/" + v1alpha1.ComponentRedisSentinel: {"redis/password"},
	"StatefulSet/" + v1alpha1.ComponentMinio:         {"minio/root-password", "minio/root-user"},
	// The cluster id: not a credential, but generated once like one, and shared
	// by every node of the cluster.
	"StatefulSet/" + v1alpha1.ComponentKafka:           {"kafka/cluster-id"},
	"StatefulSet/" + v1alpha1.ComponentKafkaController: {"kafka/cluster-id"},
	// The one holder of MinIO's root credentials besides MinIO: it creates the
	// services' user with them.
	"Job/minio-setup": {"minio-service-credentials/access-key", "minio-service-credentials/secret-key", "minio/root-password", "minio/root-user"},
}

// credentialInputs are every example and profile (everyInput), and the production
// example with each backing service disabled in turn, and external in turn.
func credentialInputs(t *testing.T) map[string]input {
	t.Helper()
	out := everyInput(t)
	for _, backing := range release.BackingServices() {
		p, rel := production(t)
		c, _ := p.Spec.Component(backing)
		c.Stateful.Enabled = ptr.To(false)
		out["production without "+backing] = input{p, rel}

		p, rel = production(t)
		c, _ = p.Spec.Component(backing)
		*c.Stateful = v1alpha1.StatefulComponentSpec{External: &v1alpha1.ExternalServiceSpec{Host: backing + ".example.com"}}
		if backing != v1alpha1.ComponentKafka {
			c.Stateful.External.CredentialsSecretRef = &v1alpha1.ExternalCredentialsRef{Name: "user-" + backing}
		}
		if backing == v1alpha1.ComponentRedis {
			p.Spec.Infrastructure.Redis.Mode = v1alpha1.RedisStandalone
		}
		out["production with external "+backing] = input{p, rel}
	}
	return out
}

// credentialsOf are the Secret keys a service that uses backing receives: the
// generated ones of a backing service the platform runs, those of the user's Secret
// (with the default key names) of an external one.
func credentialsOf(p *v1alpha1.OntoPlatform, backing string) []string {
	c, _ := p.Spec.Component(backing)
	ext := c.External()
	if ext == nil {
		return credentialsOfBacking[backing]
	}
	if ext.CredentialsSecretRef == nil {
		return nil
	}
	name := ext.CredentialsSecretRef.Name
	switch backing {
	case v1alpha1.ComponentPostgres:
		return []string{name + "/password", name + "/username"}
	case v1alpha1.ComponentRedis:
		return []string{name + "/password"}
	case v1alpha1.ComponentMinio:
		return []string{name + "/accessKey", name + "/secretKey"}
	}
	return nil
}

// TestCredentialsByNeed: each workload's pod template references exactly the Secret
// keys it needs, nothing else: a platform service those of the enabled backing
// services its catalog entry uses (the gateway none), an infrastructure workload its
// own; and a service's ConfigMap holds the connection settings of those services only.
func TestCredentialsByNeed(t *testing.T) {
	for name, in := range credentialInputs(t) {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, in.p, in.rel)
			checked := 0
			for _, u := range objs {
				// By component: a Job's name carries a hash of its spec.
				id := u.GetKind() + "/" + u.GetLabels()[LabelName]
				tpl, ok := workloadTemplate(t, u)
				if !ok {
					continue
				}
				checked++
				want, isInfra := credentialsOfInfrastructure[id]
				var used []string
				if !isInfra {
					c, known := in.p.Spec.Component(u.GetLabels()[LabelName])
					if !known || c.Service == nil {
						t.Errorf("%s: a workload the test does not know; say which Secrets it may read", id)
						continue
					}
					used = enabledUses(t, in.p, in.rel, c.Name)
					want = nil
					for _, b := range used {
						want = append(want, credentialsOf(in.p, b)...)
					}
					if c.Name == v1alpha1.ComponentGateway && len(want) != 0 {
						t.Errorf("the gateway would receive %v; it faces the Internet and must receive no credential", want)
					}
					checkSettings(t, objs, tpl, c.Name, used)
				}
				want = append(slices.Clone(want), certificatesOf(in.p, id)...)
				sort.Strings(want)
				if diff := cmp.Diff(want, secretRefs(tpl.Spec), cmpEmpty); diff != "" {
					t.Errorf("%s: Secret keys referenced (-want +got):\n%s", id, diff)
				}
			}
			if checked == 0 {
				t.Fatal("no workload rendered")
			}
		})
	}
}

// certificatesOf are the certificate Secret keys workload id reads with tlsEnabled: a
// server its own certificate, key and CA (MinIO by name, it wants its own file
// names); the MinIO setup Job, a client only, the CA's certificate (from MinIO's Secret)
// and never a key.
func certificatesOf(p *v1alpha1.OntoPlatform, id string) []string {
	kind, name, _ := strings.Cut(id, "/")
	switch {
	case !p.Spec.Global.TLSEnabled:
		return nil
	case kind == "Job":
		return []string{"minio-tls/ca.crt"}
	case name == v1alpha1.ComponentMinio:
		return []string{"minio-tls/ca.crt", "minio-tls/tls.crt", "minio-tls/tls.key"}
	}
	return []string{name + "-tls/*"}
}

// cmpEmpty treats a nil and an empty list alike.
var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// enabledUses are the backing services component uses by the release, those the
// platform runs or points at externally only.
func enabledUses(t *testing.T, p *v1alpha1.OntoPlatform, rel release.Release, component string) []string {
	t.Helper()
	uses, err := rel.Uses(component)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range uses {
		if c, _ := p.Spec.Component(b); c.Enabled() || c.External() != nil {
			out = append(out, b)
		}
	}
	return out
}

// checkSettings: the service's ConfigMap has each used backing service's settings and
// no other backing service's.
func checkSettings(t *testing.T, objs []*unstructured.Unstructured, tpl corev1.PodTemplateSpec, component string, used []string) {
	t.Helper()
	var data map[string]string
	for _, ef := range tpl.Spec.Containers[0].EnvFrom {
		if ef.ConfigMapRef != nil {
			cm := find(objs, "ConfigMap", ef.ConfigMapRef.Name)
			if cm == nil {
				t.Fatalf("%s: ConfigMap %s is not rendered", component, ef.ConfigMapRef.Name)
			}
			data, _, _ = unstructured.NestedStringMap(cm.Object, "data")
		}
	}
	for backing, prefix := range settingsOfBacking {
		has := false
		for k := range data {
			if strings.HasPrefix(k, prefix) {
				has = true
			}
		}
		if want := slices.Contains(used, backing); has != want {
			t.Errorf("%s: ConfigMap has %s* settings: %v, want %v (uses %v)", component, prefix, has, want, used)
		}
	}
}

// workloadTemplate is the pod template of a Deployment, StatefulSet or Job.
func workloadTemplate(t *testing.T, u *unstructured.Unstructured) (corev1.PodTemplateSpec, bool) {
	t.Helper()
	tpl, ok := podTemplates(t, []*unstructured.Unstructured{u})[u.GetKind()+"/"+u.GetName()]
	return tpl, ok
}

// secretRefs lists, sorted, every Secret key a pod can read, as "secret/key"; a whole
// Secret (envFrom, a volume without items) is "secret/*".
func secretRefs(spec corev1.PodSpec) []string {
	seen := map[string]bool{}
	whole := func(name string, items []corev1.KeyToPath) {
		if len(items) == 0 {
			seen[name+"/*"] = true
		}
		for _, it := range items {
			seen[name+"/"+it.Key] = true
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				seen[e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key] = true
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.SecretRef != nil {
				seen[ef.SecretRef.Name+"/*"] = true
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			whole(v.Secret.SecretName, v.Secret.Items)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					whole(s.Secret.Name, s.Secret.Items)
				}
			}
		}
	}
	return sortedKeys(seen)
}

// TestRedisAuth: in both modes redis requires the generated password (requirepass,
// masterauth) and keeps protected mode on, the sentinels require it and send it
// (auth-pass), and the password reaches them only from the Secret: no ConfigMap names
// requirepass, auth-pass or masterauth.
func TestRedisAuth(t *testing.T) {
	for _, mode := range []v1alpha1.RedisMode{v1alpha1.RedisSentinel, v1alpha1.RedisStandalone} {
		t.Run(string(mode), func(t *testing.T) {
			p, rel := production(t)
			p.Spec.Infrastructure.Redis.Mode = mode
			objs := mustRender(t, p, rel)
			secret := find(objs, "Secret", v1alpha1.ComponentRedis)
			if secret == nil || secret.GetAnnotations()[AnnotationGenerateKeys] != "password" {
				t.Fatalf("redis Secret = %v, want one generating the key password", secret)
			}
			for _, u := range objs {
				if u.GetKind() != "ConfigMap" {
					continue
				}
				data, _, _ := unstructured.NestedStringMap(u.Object, "data")
				for k, v := range data {
					for _, directive := range []string{"requirepass", "masterauth", "auth-pass"} {
						if strings.Contains(v, directive) {
							t.Errorf("ConfigMap %s key %s has %s: the password must come from the Secret", u.GetName(), k, directive)
						}
					}
					if k == "redis.conf" && !strings.Contains(v, "protected-mode yes") {
						t.Errorf("ConfigMap %s: redis.conf without protected-mode yes:\n%s", u.GetName(), v)
					}
				}
			}
			workloads := map[string][]string{
				v1alpha1.ComponentRedis: {`requirepass "$REDISCLI_AUTH"`, `masterauth "$REDISCLI_AUTH"`},
			}
			if mode == v1alpha1.RedisSentinel {
				workloads[v1alpha1.ComponentRedisSentinel] = []string{`sentinel auth-pass onto \"$REDISCLI_AUTH\"`, `requirepass \"$REDISCLI_AUTH\"`}
			}
			for name, directives := range workloads {
				u := find(objs, "StatefulSet", name)
				if u == nil {
					t.Fatalf("no StatefulSet %s", name)
				}
				c := podTemplates(t, []*unstructured.Unstructured{u})["StatefulSet/"+name].Spec.Containers[0]
				script := strings.Join(c.Command, " ")
				for _, d := range directives {
					if !strings.Contains(script, d) {
						t.Errorf("%s: command lacks %s:\n%s", name, d, script)
					}
				}
				if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
					ref := e.ValueFrom
					return e.Name == "REDISCLI_AUTH" && ref != nil && ref.SecretKeyRef != nil &&
						ref.SecretKeyRef.Name == v1alpha1.ComponentRedis && ref.SecretKeyRef.Key == "password" &&
						(ref.SecretKeyRef.Optional == nil || !*ref.SecretKeyRef.Optional)
				}) {
					t.Errorf("%s: no required REDISCLI_AUTH from Secret redis key password (redis-cli, the probes and the script read it): %+v", name, c.Env)
				}
			}
		})
	}
}

// TestMinioSetupJob: with MinIO, the infrastructure plane ends with the Job that gives
// the services their own user; the Job is named after its spec (same spec, same name:
// not run again; changed spec, by the platform or a user's patch, new name: an
// immutable template is never re-applied), and MinIO's Service never selects its pod.
func TestMinioSetupJob(t *testing.T) {
	jobOf := func(t *testing.T, planes []Plane) (*unstructured.Unstructured, int) {
		t.Helper()
		for _, pl := range planes {
			for i, u := range pl.Objects {
				if u.GetKind() == "Job" {
					if pl.Name != v1alpha1.PlaneInfrastructure {
						t.Errorf("Job %s in plane %s, want infrastructure", u.GetName(), pl.Name)
					}
					return u, i
				}
			}
		}
		return nil, -1
	}
	render := func(t *testing.T, p *v1alpha1.OntoPlatform, rel release.Release, patches ...Patch) []Plane {
		t.Helper()
		planes, err := Render(p, Options{Release: rel, Patches: patches})
		if err != nil {
			t.Fatal(err)
		}
		return planes
	}
	p, rel := production(t)
	planes := render(t, p, rel)
	job, at := jobOf(t, planes)
	if job == nil {
		t.Fatal("no Job rendered with MinIO enabled")
	}
	if !strings.HasPrefix(job.GetName(), "minio-setup-") || len(job.GetName()) != len("minio-setup-")+10 {
		t.Errorf("Job name %q, want minio-setup-<10 hex digits>", job.GetName())
	}
	infra := planes[slices.IndexFunc(planes, func(pl Plane) bool { return pl.Name == v1alpha1.PlaneInfrastructure })]
	if minio := slices.IndexFunc(infra.Objects, func(u *unstructured.Unstructured) bool {
		return u.GetKind() == "StatefulSet" && u.GetName() == v1alpha1.ComponentMinio
	}); minio < 0 || minio > at {
		t.Errorf("the Job (at %d) is not applied after MinIO's StatefulSet (at %d)", at, minio)
	}
	svc := convert[corev1.Service](t, find(Objects(planes), "Service", v1alpha1.ComponentMinio))
	tpl := podTemplates(t, []*unstructured.Unstructured{job})["Job/"+job.GetName()]
	if sel := svc.Spec.Selector; sel[LabelName] == tpl.Labels[LabelName] {
		t.Errorf("MinIO's Service selector %v selects the Job's pod (labels %v)", sel, tpl.Labels)
	}

	// Under the default isolation, MinIO admits the Job's pod on its API port, and
	// nothing else of the Job's.
	nps := networkPoliciesOf(t, Objects(planes))
	minioTpl := podTemplates(t, []*unstructured.Unstructured{find(Objects(planes), "StatefulSet", v1alpha1.ComponentMinio)})["StatefulSet/"+v1alpha1.ComponentMinio]
	for _, port := range containerPorts(minioTpl) {
		got := nps.admits(t, p.Namespace, minioTpl.Labels, peer{namespace: p.Namespace, labels: tpl.Labels}, port)
		if want := port == 9000; got != want {
			t.Errorf("the Job's pod reaches MinIO's port %d: %v, want %v", port, got, want)
		}
	}

	again, _ := jobOf(t, render(t, p, rel))
	if again.GetName() != job.GetName() {
		t.Errorf("the same platform renders the Job as %s, then %s", job.GetName(), again.GetName())
	}
	other := p.DeepCopy()
	other.Spec.Infrastructure.Minio.Image = "registry.example.com/minio:mirror"
	if moved, _ := jobOf(t, render(t, other, rel)); moved.GetName() == job.GetName() {
		t.Errorf("a new MinIO image keeps the Job's name %s: the changed template could not be applied", job.GetName())
	}
	patch := Patch{Patch: "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: minio-setup\nspec:\n  backoffLimit: 2\n"}
	if patched, _ := jobOf(t, render(t, p, rel, patch)); patched.GetName() == job.GetName() {
		t.Errorf("a user's patch of the Job keeps its name %s", job.GetName())
	}

	off := p.DeepCopy()
	off.Spec.Infrastructure.Minio.Enabled = ptr.To(false)
	if j, _ := jobOf(t, render(t, off, rel)); j != nil {
		t.Errorf("MinIO disabled still renders Job %s", j.GetName())
	}
}
