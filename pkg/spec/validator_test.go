/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// examplesDir holds the user-facing examples; tests read them in place so they can
// never drift from what the README shows.
const examplesDir = "../../examples"

func newValidator(t testing.TB) *spec.Validator {
	t.Helper()
	catalog, err := release.Default()
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(catalog)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// at is an issue a test expects: the field and the line it must be reported at.
type at struct {
	line  int
	field string
	doc   int
}

func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		file string
		want []at
		// contains are fragments the message must hold, beyond file:line: field.
		contains []string
	}{
		{file: "version-empty.yaml", want: []at{{7, "spec.version", 0}}},
		{file: "version-not-semver.yaml", want: []at{{7, "spec.version", 0}}, contains: []string{"semantic version"}},
		{file: "version-not-in-catalog.yaml", want: []at{{7, "spec.version", 0}}, contains: []string{"known: 1.5.0, 1.6.0"}},
		{file: "version-missing.yaml", want: []at{{6, "spec.version", 0}}, contains: []string{"spec.version: Required value: the platform's release version is required (known: 1.5.0, 1.6.0)"}},
		{file: "required-nested.yaml", want: []at{
			{13, "spec.dataPlane.dataService.autoscaling.podsMetrics[0].averageValue", 0},
			{13, "spec.dataPlane.dataService.autoscaling.podsMetrics[0].name", 0},
			{15, "spec.patches[0].patch", 0},
		}, contains: []string{"averageValue: Required value: the average value per pod", "name: Required value: the name of the metric is required", "patch: Required value: the patch itself is required"}},
		{file: "replicas-negative.yaml", want: []at{{10, "spec.infrastructure.postgres.replicas", 0}}},
		{file: "service-replicas-too-many.yaml", want: []at{{10, "spec.dataPlane.nessie.replicas", 0}}},
		{file: "min-above-max.yaml", want: []at{{12, "spec.controlPlane.ontologyService.autoscaling.minReplicas", 0}}},
		{file: "replicas-outside-autoscaling.yaml", want: []at{{10, "spec.dataPlane.dataService.replicas", 0}}},
		{file: "quantity-bad.yaml", want: []at{{10, "spec.infrastructure.kafka.storage", 0}}, contains: []string{`"100GB"`}},
		{file: "resources-bad-quantity.yaml", want: []at{{13, "spec.controlPlane.authService.resources.requests.memory", 0}}},
		{file: "requests-above-limits.yaml", want: []at{{11, "spec.infrastructure.postgres.resources.requests[memory]", 0}}, contains: []string{"requests must not exceed limits: memory"}},
		{file: "quantity-negative.yaml", want: []at{{10, "spec.infrastructure.minio.storage", 0}, {14, "spec.controlPlane.schemaRegistry.resources.requests[cpu]", 0}, {17, "spec.tenancy.resourceQuota[requests.memory]", 0}}, contains: []string{"must be greater than zero", "must not be negative"}},
		{file: "unknown-field-top.yaml", want: []at{{8, "spec.replicas", 0}}, contains: []string{`spec.replicas: unknown field "replicas"`}},
		{file: "unknown-field-nested.yaml", want: []at{{11, "spec.gateway.ingress.hostname", 0}}, contains: []string{`spec.gateway.ingress.hostname: unknown field "hostname"`}},
		{file: "unknown-field-metadata.yaml", want: []at{{6, "metadata.label", 0}}, contains: []string{`metadata.label: unknown field "label", did you mean "labels"?`}},
		{file: "unknown-field-typo.yaml", want: []at{
			{6, "metadata.lables", 0},
			{11, "spec.global.ImagePullPolicy", 0},
			{14, "spec.infrastructure.postgres.storag", 0},
			{15, "spec.infrastructure.postgres.replcias", 0},
			{17, "spec.gateway.colour", 0},
		}, contains: []string{
			`metadata.lables: unknown field "lables", did you mean "labels"?`,
			`spec.global.ImagePullPolicy: unknown field "ImagePullPolicy", did you mean "imagePullPolicy"?`,
			`spec.infrastructure.postgres.storag: unknown field "storag", did you mean "storage"?`,
			`spec.infrastructure.postgres.replcias: unknown field "replcias", did you mean "replicas"?`,
			`spec.gateway.colour: unknown field "colour"`,
		}},
		{file: "ingress-tls-without-host.yaml", want: []at{{9, "spec.gateway.ingress.host", 0}}, contains: []string{"host is required when tls is enabled"}},
		{file: "ingress-annotations.yaml", want: []at{
			{14, "spec.gateway.ingress.annotations[-bad.example.com/name]", 0},
			{13, "spec.gateway.ingress.annotations[not a key]", 0},
		}, contains: []string{"annotation keys are qualified names"}},
		{file: "tls-issuer-without-tls.yaml", want: []at{{10, "spec.global.tls.issuerRef", 0}}, contains: []string{"set tlsEnabled: true"}},
		{file: "gpu-count-zero.yaml", want: []at{{12, "spec.intelligencePlane.reasoningService.gpu.count", 0}}},
		{file: "duplicate-key.yaml", want: []at{{10, "spec.gateway.replicas", 0}}, contains: []string{"already set at line 9"}},
		{file: "redis-mode.yaml", want: []at{{10, "spec.infrastructure.redis.mode", 0}}, contains: []string{`"standalone", "sentinel"`}},
		{file: "logging-level.yaml", want: []at{{10, "spec.observability.logging.level", 0}}},
		{file: "pull-policy.yaml", want: []at{{9, "spec.global.imagePullPolicy", 0}}},
		{file: "ingress-host-pattern.yaml", want: []at{{11, "spec.gateway.ingress.host", 0}}},
		{file: "patches.yaml", want: []at{
			{9, "spec.patches[0].patch", 0},
			{12, "spec.patches[1].target", 0},
			{13, "spec.patches[2].patch", 0},
			{17, "spec.patches[3].patch", 0}, {17, "spec.patches[3].patch", 0}, {17, "spec.patches[3].patch", 0}, {17, "spec.patches[3].patch", 0},
			{24, "spec.patches[4].patch", 0},
			{25, "spec.patches[5].patch", 0},
		}, contains: []string{"line 2 of the patch", "need a target", `op "upsert"`, "must be a JSON pointer", "value is required", "one entry per object"}},
		{file: "tenancy-quota-quantity.yaml", want: []at{{11, "spec.tenancy.resourceQuota.requests.memory", 0}}},
		{file: "tenancy-mode.yaml", want: []at{{9, "spec.tenancy.mode", 0}}},
		{file: "tenancy-namespace.yaml", want: []at{{13, "spec.tenancy.networkPolicy.allowedNamespaces[1]", 0}}},
		{file: "tenancy-pod-security.yaml", want: []at{{9, "spec.tenancy.podSecurity", 0}}, contains: []string{`"enforce", "warn", "none"`}},
		{file: "tenancy-network-namespaces.yaml", want: []at{
			{10, "spec.tenancy.networkPolicy.isolate", 0},
			{11, "spec.tenancy.networkPolicy.ingressNamespaces[1]", 0},
			{12, "spec.tenancy.networkPolicy.monitoringNamespaces[1]", 0},
		}},
		{file: "wrong-type.yaml", want: []at{{9, "spec.gateway.replicas", 0}}, contains: []string{`spec.gateway.replicas: Invalid value: "three": must be an integer, not a string`}},
		// The value given, not the name of its type; a list is not shown.
		{file: "wrong-type-boolean.yaml", want: []at{
			{11, "spec.controlPlane.ontologyService.autoscaling.enabled", 0},
			{15, "spec.gateway.ingress.enabled", 0},
			{17, "spec.global.tlsEnabled", 0},
			{20, "spec.tenancy.networkPolicy.isolate", 0},
		}, contains: []string{
			`wrong-type-boolean.yaml:11: spec.controlPlane.ontologyService.autoscaling.enabled: Invalid value: "yes": must be true or false, not a string; write true or false without quotes`,
			`wrong-type-boolean.yaml:15: spec.gateway.ingress.enabled: Invalid value: "maybe": must be true or false, not a string`,
			`wrong-type-boolean.yaml:17: spec.global.tlsEnabled: Invalid value: 1: must be true or false, not an integer`,
			`wrong-type-boolean.yaml:20: spec.tenancy.networkPolicy.isolate: Invalid value: must be true or false, not a list`,
		}},
		{file: "tracing-sampling.yaml", want: []at{{11, "spec.observability.tracing.samplingRatio", 0}}},
		{file: "remediation-factor.yaml", want: []at{{11, "spec.remediation.memory.factor", 0}}, contains: []string{"factor must be a decimal above 1 and at most 4"}},
		{file: "pods-metric-duplicate.yaml", want: []at{{15, "spec.controlPlane.ontologyService.autoscaling.podsMetrics[1]", 0}}},
		{file: "wrong-apiversion.yaml", want: []at{{1, "apiVersion", 0}}},
		{file: "wrong-kind.yaml", want: []at{{2, "kind", 0}}, contains: []string{"is a ConfigMap (v1), not an OntoPlatform"}},
		{file: "name-missing.yaml", want: []at{{3, "metadata.name", 0}}},
		{file: "name-invalid.yaml", want: []at{{4, "metadata.name", 0}, {5, "metadata.namespace", 0}}},
		{file: "spec-missing.yaml", want: []at{{1, "spec", 0}}},
		{file: "yaml-syntax.yaml", want: []at{{8, "", 0}}, contains: []string{"yaml-syntax.yaml:8: invalid YAML: did not find expected ',' or ']'; a [ ] or { } is not closed"}},
		{file: "yaml-indentation.yaml", want: []at{{6, "", 0}}, contains: []string{"yaml-indentation.yaml:6: invalid YAML: did not find expected key; a line of the block that starts here is indented differently"}},
		{file: "yaml-tab.yaml", want: []at{{6, "", 0}}, contains: []string{"yaml-tab.yaml:6: invalid YAML: found character that cannot start any token; this line is indented with a tab; YAML indents with spaces only"}},
		{file: "yaml-unterminated.yaml", want: []at{{6, "", 0}}, contains: []string{"yaml-unterminated.yaml:6: invalid YAML: found unexpected end of stream; the file ends inside a quoted string"}},
		{file: "not-an-object.yaml", want: []at{{1, "", 0}}, contains: []string{"is a list"}},
		{file: "empty.yaml", want: []at{{0, "", 0}}, contains: []string{"empty.yaml: the file is empty: expected an OntoPlatform document (kubectl onto init writes a starter)"}},
		{file: "empty-zero-bytes.yaml", want: []at{{0, "", 0}}, contains: []string{"empty-zero-bytes.yaml: the file is empty: expected an OntoPlatform document (kubectl onto init writes a starter)"}},
		{file: "json-error.json", want: []at{{11, "spec.controlPlane.schemaRegistry.replicas", 0}}},
		{file: "multi-doc.yaml", want: []at{{17, "spec.gateway.replicas", 2}, {20, "kind", 3}}, contains: []string{"document 3 is a ConfigMap"}},
		{file: "external-with-enabled.yaml", want: []at{{10, "spec.infrastructure.postgres.enabled", 0}}, contains: []string{"must not be true when external is set"}},
		{file: "external-with-deployment-fields.yaml", want: []at{
			{10, "spec.infrastructure.minio.replicas", 0},
			{11, "spec.infrastructure.minio.storage", 0},
			{12, "spec.infrastructure.minio.image", 0},
			{13, "spec.infrastructure.minio.resources", 0},
		}, contains: []string{"must not be set when external is set"}},
		{file: "external-missing-host.yaml", want: []at{{10, "spec.infrastructure.postgres.external.host", 0}}, contains: []string{"the external service's host is required"}},
		{file: "external-bad-port.yaml", want: []at{{12, "spec.infrastructure.redis.external.port", 0}, {16, "spec.infrastructure.kafka.external.port", 0}}},
		{file: "external-bad-host.yaml", want: []at{{11, "spec.infrastructure.postgres.external.host", 0}, {16, "spec.infrastructure.redis.external.host", 0}}},
		{file: "external-per-service.yaml", want: []at{
			{10, "spec.infrastructure.postgres.external.credentialsSecretRef", 0},
			{13, "spec.infrastructure.redis.mode", 0},
			{16, "spec.infrastructure.redis.external.database", 0},
			{19, "spec.infrastructure.redis.external.credentialsSecretRef.usernameKey", 0},
			{21, "spec.infrastructure.minio.external.credentialsSecretRef", 0},
			{26, "spec.infrastructure.kafka.external.credentialsSecretRef", 0},
		}, contains: []string{"log in to an external postgres", "postgres only", "not supported for kafka", "Redis takes a password only", "must not be sentinel"}},
		{file: "many-errors.yaml", want: []at{
			{8, "spec.global.imagePullPolicy", 0},
			{11, "spec.infrastructure.postgres.replicas", 0},
			{13, "spec.infrastructure.redis.mode", 0},
			{16, "spec.controlPlane.ontologyService.replicas", 0},
			{22, "spec.controlPlane.ontologyService.resources.requests[cpu]", 0},
			{26, "spec.intelligencePlane.reasoningService.gpu.count", 0},
			{28, "spec.gateway.ingress.host", 0},
			{30, "spec.gateway.ingress.tlsSecret", 0},
		}, contains: []string{"many-errors.yaml: 8 errors"}},
	}
	v := newValidator(t)
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.file] = true
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", tc.file)
			objs, err := v.LoadFile(path, nil)
			if err == nil {
				t.Fatalf("Load accepted an invalid file and returned %d objects", len(objs))
			}
			if objs != nil {
				t.Errorf("Load returned objects along with an error")
			}
			var serr *spec.Error
			if !errors.As(err, &serr) {
				t.Fatalf("error is %T, want *spec.Error: %v", err, err)
			}
			if len(serr.Issues) != len(tc.want) {
				t.Errorf("got %d issues, want %d:\n%v", len(serr.Issues), len(tc.want), err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !hasIssue(serr.Issues, w) {
					t.Errorf("no issue for %s at line %d (document %d):\n%v", w.field, w.line, w.doc, err)
				}
				// The message a user reads must name the line and the field together.
				prefix := path
				if w.line > 0 {
					prefix += fmt.Sprintf(":%d", w.line)
				}
				if w.field != "" {
					prefix += ": " + w.field + ":"
				}
				if !strings.Contains(msg, prefix) {
					t.Errorf("message lacks %q:\n%s", prefix, msg)
				}
			}
			for _, c := range tc.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("message lacks %q:\n%s", c, msg)
				}
			}
			golden.Assert(t, []byte(msg+"\n"), strings.TrimSuffix(path, filepath.Ext(path))+".golden")
		})
	}
	// Every input file has a case, so a new file cannot sit there untested.
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); filepath.Ext(name) != ".golden" && !seen[name] {
			t.Errorf("testdata/invalid/%s has no test case", name)
		}
	}
}

func hasIssue(issues []spec.Issue, w at) bool {
	for _, is := range issues {
		if is.Field == w.field && is.Line == w.line && is.Document == w.doc {
			return true
		}
	}
	return false
}

func TestLoadExamples(t *testing.T) {
	tests := []struct {
		path  string
		check func(t *testing.T, ps []*v1alpha1.OntoPlatform)
	}{
		{path: filepath.Join(examplesDir, "platform.yaml"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			p := ps[0]
			equal(t, "name", p.Name, "onto-production")
			equal(t, "version", p.Spec.Version, "1.5.0")
			equal(t, "imagePullPolicy", string(p.Spec.Global.ImagePullPolicy), "IfNotPresent")
			equal(t, "storageClass", p.Spec.Global.StorageClass, "fast-ssd")
			equal(t, "redis mode", p.Spec.Infrastructure.Redis.Mode, v1alpha1.RedisSentinel)
			as := p.Spec.ControlPlane.OntologyService.Autoscaling
			equal(t, "scale-up window", *as.ScaleUpStabilizationSeconds, 60)
			equal(t, "scale-down window", *as.ScaleDownStabilizationSeconds, 300)
			equal(t, "targetCPU (set)", as.TargetCPUUtilization, 70)
			equal(t, "targetCPU (default)", p.Spec.DataPlane.DataService.Autoscaling.TargetCPUUtilization, 80)
			// No schema default (render's is 10Gi): external: refuses a storage set
			// next to it, and could not tell a default from the user's.
			if p.Spec.Infrastructure.Redis.Storage != nil {
				t.Errorf("redis storage was defaulted to %s; want it unset", p.Spec.Infrastructure.Redis.Storage)
			}
			equal(t, "gpu resource (default)", p.Spec.IntelligencePlane.ReasoningService.GPU.ResourceName, "nvidia.com/gpu")
			equal(t, "postgres cpu limit", p.Spec.Infrastructure.Postgres.Resources.Limits.Cpu().String(), "4")
			equal(t, "tracing endpoint (default)", p.Spec.Observability.Tracing.Endpoint, "http://otel-collector.observability.svc:4317")
		}},
		{path: filepath.Join(examplesDir, "minimal.yaml"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			s := ps[0].Spec
			equal(t, "version", s.Version, "1.6.0")
			equal(t, "imageRegistry (default)", s.Global.ImageRegistry, "ghcr.io/coomia-dip")
			equal(t, "redis mode (default)", s.Infrastructure.Redis.Mode, v1alpha1.RedisStandalone)
			// No schema default either, for the same reason; unset means deployed.
			postgres, _ := s.Component(v1alpha1.ComponentPostgres)
			equal(t, "postgres enabled (unset)", postgres.Enabled(), true)
			equal(t, "logging level (default)", s.Observability.Logging.Level, "INFO")
			equal(t, "metrics interval (default)", s.Observability.Metrics.Interval, "30s")
			if s.Gateway.Ingress != nil {
				t.Errorf("an optional section without a default was filled: ingress %v", s.Gateway.Ingress)
			}
			// Tenancy is defaulted: a file without it is isolated and enforces
			// PodSecurity all the same.
			if s.Tenancy == nil || s.Tenancy.NetworkPolicy == nil || s.Tenancy.NetworkPolicy.Isolate == nil {
				t.Fatalf("tenancy not defaulted: %+v", s.Tenancy)
			}
			np := s.Tenancy.NetworkPolicy
			equal(t, "isolate (default)", *np.Isolate, true)
			equal(t, "ingress namespaces (default)", strings.Join(np.IngressNamespaces, ","), "ingress-nginx")
			equal(t, "monitoring namespaces (default)", strings.Join(np.MonitoringNamespaces, ","), "monitoring")
			equal(t, "egress (default)", np.Egress, false)
			equal(t, "podSecurity (default)", s.Tenancy.PodSecurity, v1alpha1.PodSecurityEnforce)
		}},
		{path: filepath.Join(examplesDir, "tenant.yaml"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			ten := ps[0].Spec.Tenancy
			equal(t, "mode", ten.Mode, "namespace")
			q := ten.ResourceQuota["requests.memory"]
			equal(t, "quota", q.Cmp(resource.MustParse("20Gi")), 0)
			equal(t, "allowed", strings.Join(ten.NetworkPolicy.AllowedNamespaces, ","), "onto-system")
			equal(t, "isolate (set)", *ten.NetworkPolicy.Isolate, true)
		}},
		{path: filepath.Join("testdata", "valid", "optional-booleans.yaml"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			equal(t, "gpu count", ps[0].Spec.IntelligencePlane.ReasoningService.GPU.Count, 2)
			equal(t, "autoscaling max (default)", ps[0].Spec.ControlPlane.OntologyService.Autoscaling.MaxReplicas, 10)
		}},
		{path: filepath.Join("testdata", "valid", "multi-doc.yaml"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			if len(ps) != 2 {
				t.Fatalf("got %d platforms, want 2", len(ps))
			}
			equal(t, "names", ps[0].Name+","+ps[1].Name, "onto-a,onto-b")
			equal(t, "namespace", ps[1].Namespace, "team-b")
			equal(t, "pods metric", ps[1].Spec.DataPlane.DataService.Autoscaling.PodsMetrics[0].AverageValue.String(), "100")
		}},
		{path: filepath.Join("testdata", "valid", "patches.yaml"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			equal(t, "patches", len(ps[0].Spec.Patches), 3)
			equal(t, "target selector", ps[0].Spec.Patches[1].Target.LabelSelector, "app.kubernetes.io/name=postgres")
		}},
		{path: filepath.Join("testdata", "valid", "platform.json"), check: func(t *testing.T, ps []*v1alpha1.OntoPlatform) {
			equal(t, "label", ps[0].Labels["team"], "data")
			equal(t, "cpu (a JSON number)", ps[0].Spec.Infrastructure.Postgres.Resources.Requests.Cpu().String(), "1")
		}},
	}
	v := newValidator(t)
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			ps, err := v.LoadFile(tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) == 0 {
				t.Fatal("no platform loaded")
			}
			for _, p := range ps {
				equal(t, "apiVersion", p.APIVersion, v1alpha1.GroupVersion.String())
				equal(t, "kind", p.Kind, v1alpha1.Kind)
			}
			tc.check(t, ps)
		})
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestLoadFileStdin(t *testing.T) {
	v := newValidator(t)
	ps, err := v.LoadFile("-", strings.NewReader("apiVersion: onto.paas/v1alpha1\nkind: OntoPlatform\nmetadata: {name: x}\nspec: {version: 1.6.0}\n"))
	if err != nil || len(ps) != 1 {
		t.Fatalf("LoadFile(-) = %d platforms, %v", len(ps), err)
	}
	_, err = v.LoadFile("-", strings.NewReader("kind: OntoPlatform\n"))
	var serr *spec.Error
	if !errors.As(err, &serr) || serr.File != spec.StdinName {
		t.Fatalf("error for stdin = %v, want a *spec.Error naming %s", err, spec.StdinName)
	}
	if _, err := v.LoadFile(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil || errors.As(err, &serr) {
		t.Fatalf("a missing file gave %v, want a plain read error", err)
	}
}

func TestValidate(t *testing.T) {
	v := newValidator(t)
	ps, err := v.LoadFile(filepath.Join(examplesDir, "platform.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		edit   func(p *v1alpha1.OntoPlatform)
		fields []string
	}{
		{name: "scale within bounds", edit: func(p *v1alpha1.OntoPlatform) {
			p.Spec.ControlPlane.SchemaRegistry.Replicas = ptr.To[int32](5)
		}},
		{name: "typed object without TypeMeta", edit: func(p *v1alpha1.OntoPlatform) {
			p.TypeMeta = v1alpha1.OntoPlatform{}.TypeMeta
		}},
		{name: "scale outside autoscaling bounds", edit: func(p *v1alpha1.OntoPlatform) {
			p.Spec.ControlPlane.OntologyService.Replicas = ptr.To[int32](11)
		}, fields: []string{"spec.controlPlane.ontologyService.replicas"}},
		{name: "negative replicas and min above max", edit: func(p *v1alpha1.OntoPlatform) {
			p.Spec.Gateway.Replicas = ptr.To[int32](-1)
			p.Spec.DataPlane.DataService.Autoscaling.MinReplicas = 30
			p.Spec.DataPlane.DataService.Replicas = nil
		}, fields: []string{"spec.dataPlane.dataService.autoscaling.minReplicas", "spec.gateway.replicas"}},
		{name: "version outside the catalog", edit: func(p *v1alpha1.OntoPlatform) {
			p.Spec.Version = "9.9.9"
		}, fields: []string{"spec.version"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ps[0].DeepCopy()
			p.Status.Phase = "Running" // status is kept but not validated
			tc.edit(p)
			err := v.Validate(p)
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				equal(t, "status kept", string(p.Status.Phase), "Running")
				equal(t, "kind", p.Kind, v1alpha1.Kind)
				return
			}
			var serr *spec.Error
			if !errors.As(err, &serr) {
				t.Fatalf("Validate = %v, want a *spec.Error", err)
			}
			var got []string
			for _, is := range serr.Issues {
				got = append(got, is.Field)
				if is.Line != 0 {
					t.Errorf("in-memory issue has line %d", is.Line)
				}
			}
			equal(t, "fields", strings.Join(got, " "), strings.Join(tc.fields, " "))
		})
	}
}

// TestValidateDefaults: an object built in code gets the same defaults as a file.
func TestValidateDefaults(t *testing.T) {
	v := newValidator(t)
	p := &v1alpha1.OntoPlatform{}
	p.Name = "onto-code"
	p.Spec.Version = "1.6.0"
	p.Spec.Gateway.Autoscaling = &v1alpha1.AutoscalingSpec{Enabled: true, MinReplicas: 2, MaxReplicas: 4}
	if err := v.Validate(p); err != nil {
		t.Fatal(err)
	}
	equal(t, "imagePullPolicy", string(p.Spec.Global.ImagePullPolicy), "IfNotPresent")
	equal(t, "scale-up window", *p.Spec.Gateway.Autoscaling.ScaleUpStabilizationSeconds, 60)
	equal(t, "scale-down window", *p.Spec.Gateway.Autoscaling.ScaleDownStabilizationSeconds, 300)
}

func TestErrorJSON(t *testing.T) {
	v := newValidator(t)
	_, err := v.LoadFile(filepath.Join("testdata", "invalid", "multi-doc.yaml"), nil)
	var serr *spec.Error
	if !errors.As(err, &serr) {
		t.Fatalf("want *spec.Error, got %v", err)
	}
	b, err := json.MarshalIndent(serr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, append(b, '\n'), filepath.Join("testdata", "TestErrorJSON", "multi-doc.golden"))
}

// TestLoadConcurrent: one Validator serves many goroutines (the reconciler validates
// platforms in parallel).
func TestLoadConcurrent(t *testing.T) {
	v := newValidator(t)
	good, err := os.ReadFile(filepath.Join(examplesDir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := os.ReadFile(filepath.Join("testdata", "invalid", "many-errors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			if i%2 == 0 {
				if _, err := v.Load("platform.yaml", good); err != nil {
					errs <- err
				}
				return
			}
			var serr *spec.Error
			if _, err := v.Load("many-errors.yaml", bad); !errors.As(err, &serr) || len(serr.Issues) != 8 {
				errs <- fmt.Errorf("many-errors.yaml: %v", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkLoad(b *testing.B) {
	v := newValidator(b)
	data, err := os.ReadFile(filepath.Join(examplesDir, "platform.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Load("platform.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewValidator(b *testing.B) {
	catalog, err := release.Default()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := spec.NewValidator(catalog); err != nil {
			b.Fatal(err)
		}
	}
}
