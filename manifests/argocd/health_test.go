/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package argocd_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/manifests/argocd"
)

// conditionsDir holds the OntoPlatforms recorded by api/v1alpha1's
// TestSyncConditionsAsKstatusAndKubectlWaitRead, one per kind of run's outcome.
var conditionsDir = filepath.Join("..", "..", "api", "v1alpha1", "testdata", "conditions")

const patchFile = "argocd-cm-patch.yaml"

// configMapPatch renders the argocd-cm patch that carries script under HealthKey.
func configMapPatch(script string) []byte {
	var b strings.Builder
	b.WriteString(`# Argo CD health check for onto.paas/OntoPlatform, as a patch of the argocd-cm
# ConfigMap (Argo CD's resource.customizations). Install it with:
#
#   kubectl -n argocd patch configmap argocd-cm --patch-file manifests/argocd/argocd-cm-patch.yaml
#
# or merge the data key below into the argocd-cm your GitOps repository manages.
# Generated from manifests/argocd/health.lua by
# "go test ./manifests/argocd -update": edit health.lua, not this file.
data:
`)
	b.WriteString("  " + argocd.HealthKey + ": |\n")
	for line := range strings.Lines(script) {
		if strings.TrimSpace(line) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("    " + line)
	}
	return []byte(b.String())
}

// TestConfigMapPatchCarriesHealthScript: argocd-cm-patch.yaml is health.lua
// inlined, and patching an argocd-cm with it, as kubectl patch does (a strategic
// merge), adds the health check and keeps the keys already there.
func TestConfigMapPatchCarriesHealthScript(t *testing.T) {
	if !strings.HasSuffix(argocd.HealthScript, "\n") || strings.HasSuffix(argocd.HealthScript, "\n\n") {
		t.Fatal("health.lua must end with exactly one newline, or the YAML literal block changes it")
	}
	golden.Assert(t, configMapPatch(argocd.HealthScript), patchFile)

	patchYAML, err := os.ReadFile(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := yaml.YAMLToJSON(patchYAML)
	if err != nil {
		t.Fatalf("%s is not YAML: %v", patchFile, err)
	}
	cm := corev1.ConfigMap{Data: map[string]string{"url": "https://argocd.example.com"}}
	cm.Name, cm.Namespace = "argocd-cm", "argocd"
	original, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := strategicpatch.StrategicMergePatch(original, patch, corev1.ConfigMap{})
	if err != nil {
		t.Fatalf("kubectl patch would refuse %s: %v", patchFile, err)
	}
	var got corev1.ConfigMap
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatal(err)
	}
	if got.Data[argocd.HealthKey] != argocd.HealthScript {
		t.Errorf("patched argocd-cm's %s differs from health.lua:\n%s", argocd.HealthKey, got.Data[argocd.HealthKey])
	}
	if got.Data["url"] != cm.Data["url"] {
		t.Errorf("the patch dropped argocd-cm's url: %v", got.Data)
	}
	if len(got.Data) != 2 {
		t.Errorf("patched argocd-cm has keys %v, want url and %s only", slices.Sorted(maps.Keys(got.Data)), argocd.HealthKey)
	}
}

// health is what the script returns: Argo CD's health.HealthStatus.
type health struct{ status, message string }

// runHealth runs the script as Argo CD does: obj as a global, the libraries a
// health script may use, and the table it returns read as the health status.
func runHealth(t *testing.T, obj map[string]any) health {
	t.Helper()
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(argocd.HealthScript); err != nil {
		t.Fatalf("health.lua: %v", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health.lua returned %s, want a table", L.Get(-1).Type())
	}
	h := health{status: lua.LVAsString(ret.RawGetString("status")), message: lua.LVAsString(ret.RawGetString("message"))}
	if !slices.Contains([]string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing"}, h.status) {
		t.Fatalf("health.lua returned status %q, not one Argo CD knows", h.status)
	}
	if h.message == "" {
		t.Errorf("health.lua returned %s with no message", h.status)
	}
	return h
}

// toLua converts an object decoded from JSON or YAML into Lua values, as Argo CD
// hands the live object to a health script: objects and arrays become tables
// (arrays 1-based, for ipairs), numbers LNumber.
func toLua(ls *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case map[string]any:
		tbl := ls.NewTable()
		for k, e := range v {
			tbl.RawSetString(k, toLua(ls, e))
		}
		return tbl
	case []any:
		tbl := ls.NewTable()
		for _, e := range v {
			tbl.Append(toLua(ls, e))
		}
		return tbl
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	default:
		panic(fmt.Sprintf("toLua: unexpected %T", v))
	}
}

func loadRecorded(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conditionsDir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestHealthScriptOnRecordedStatuses runs health.lua on every recorded status and
// holds it to the kstatus test's expectations: Current is Healthy, InProgress is
// Progressing, Failed is Degraded.
func TestHealthScriptOnRecordedStatuses(t *testing.T) {
	cases := map[string]struct {
		status string
		// message is a part of the message the health check must show.
		message string
	}{
		"healthy":        {"Healthy", "14/14 components ready"},
		"recovered":      {"Healthy", "14/14 components ready"},
		"upgrade-done":   {"Healthy", "ComponentsReady"},
		"applying":       {"Progressing", "applying version 1.5.0"},
		"upgrading":      {"Progressing", "upgrade 1.5.0 → 1.6.0"},
		"rolling-out":    {"Progressing", "9/14 components ready"},
		"upgrade-failed": {"Degraded", "component reasoning-service failed"},
		"apply-failed":   {"Degraded", `Service onto/gateway: Service "gateway" is invalid`},
		"degraded":       {"Degraded", "nessie: 1/2 ready: CrashLoopBackOff"},
	}
	recorded, err := filepath.Glob(filepath.Join(conditionsDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) == 0 {
		t.Fatalf("no recorded statuses in %s", conditionsDir)
	}
	for _, path := range recorded {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		if _, ok := cases[name]; !ok {
			t.Errorf("recorded status %s has no expected Argo CD health here", name)
		}
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			got := runHealth(t, loadRecorded(t, name))
			if got.status != want.status || !strings.Contains(got.message, want.message) {
				t.Errorf("health = %s (%q), want %s with %q", got.status, got.message, want.status, want.message)
			}
		})
	}
}

// TestHealthScriptBeforeTheOperatorObserves: whatever the conditions say, a spec the
// operator has not observed yet, a platform being deleted and one with no status
// are Progressing, as kstatus reads them InProgress.
func TestHealthScriptBeforeTheOperatorObserves(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(obj map[string]any)
		message string
	}{
		{"new generation, Ready=True", func(obj map[string]any) {
			obj["metadata"].(map[string]any)["generation"] = float64(2)
		}, "waiting for the spec to be observed (generation 2, observed 1)"},
		{"new generation, Stalled=True", func(obj map[string]any) {
			stalled := loadRecorded(t, "degraded")
			obj["status"] = stalled["status"]
			obj["metadata"].(map[string]any)["generation"] = float64(2)
		}, "waiting for the spec to be observed"},
		{"being deleted", func(obj map[string]any) {
			obj["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-07T03:00:00Z"
		}, "being deleted"},
		{"no status", func(obj map[string]any) {
			delete(obj, "status")
		}, "waiting for the operator"},
		{"status without conditions", func(obj map[string]any) {
			obj["status"] = map[string]any{"phase": "Pending"}
		}, "waiting for the operator"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := loadRecorded(t, "healthy")
			tc.edit(obj)
			got := runHealth(t, obj)
			if got.status != "Progressing" || !strings.Contains(got.message, tc.message) {
				t.Errorf("health = %s (%q), want Progressing with %q", got.status, got.message, tc.message)
			}
		})
	}
}
