/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestRenderServerDryRun: the render of every example and of every init profile is
// accepted by the API server as it is, by the kubectl built with the cluster:
// `kubectl apply --server-side --dry-run=server -f` of it exits 0, with no Secret
// rendered without values (they are comments) and no replicas on an autoscaled
// Deployment (checked in TestCommandOutput's goldens).
//
// A server dry run persists nothing, so the rendered Namespace, though it comes first
// in the output (checked), does not exist for the objects after it as it would in a
// real apply: each platform is moved into a namespace the test creates, and the dry run
// applies the rendered Namespace over it.
func TestRenderServerDryRun(t *testing.T) {
	c := testcluster.New(t)
	kubectl := c.Kubectl(t)
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The production example renders a ServiceMonitor; the cluster serves the kind
	// unless it was started without it.
	run(t, "apply", "--server-side", "-f", filepath.Join("..", "..", "hack", "testcluster", "manifests", "servicemonitor-crd.yaml"))
	run(t, "wait", "--for=condition=Established", "crd/servicemonitors.monitoring.coreos.com")

	type input struct{ name, file string }
	var inputs []input
	examples, err := filepath.Glob(example("*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range examples {
		if filepath.Base(f) == "fleet.yaml" {
			continue // places a platform on clusters; not a platform (TestFleetOffline)
		}
		inputs = append(inputs, input{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), file: f})
	}
	for _, profile := range []string{"minimal", "production"} {
		path := filepath.Join(t.TempDir(), profile+".yaml")
		if r := runCmd(t, "init", "--profile", profile, path); r.code != 0 {
			t.Fatalf("init --profile %s: exit %d: %s", profile, r.code, r.stderr)
		}
		inputs = append(inputs, input{name: "init-" + profile, file: path})
	}
	metadataNamespace := regexp.MustCompile(`(?m)^  namespace: \S+$`)
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(in.file)
			if err != nil {
				t.Fatal(err)
			}
			ns := c.Namespace(t)
			if !metadataNamespace.Match(data) {
				t.Fatalf("%s names no metadata.namespace", in.file)
			}
			moved := metadataNamespace.ReplaceAllString(string(data), "  namespace: "+ns)
			file := filepath.Join(t.TempDir(), "platform.yaml")
			if err := os.WriteFile(file, []byte(moved), 0o644); err != nil {
				t.Fatal(err)
			}
			r := runCmd(t, "render", "-f", file)
			if r.code != 0 {
				t.Fatalf("render: exit %d: %s", r.code, r.stderr)
			}
			first, _, _ := strings.Cut(strings.TrimPrefix(r.stdout, "---\n"), "---\n")
			if !strings.Contains(first, "\nkind: Namespace\n") || !strings.Contains(first, "\n  name: "+ns+"\n") {
				t.Fatalf("the render does not start with Namespace %s:\n%s", ns, first)
			}
			rendered := filepath.Join(t.TempDir(), "rendered.yaml")
			if err := os.WriteFile(rendered, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			out := run(t, "apply", "--server-side", "--dry-run=server", "--field-manager", "gitops", "-f", rendered)
			applied := strings.Count(out, "serverside-applied (server dry run)")
			documents := strings.Count(r.stdout, "\napiVersion: ")
			if documents == 0 || applied != documents {
				t.Fatalf("dry run applied %d objects of %d rendered:\n%s", applied, documents, out)
			}
			t.Logf("%s: %d objects accepted, %d left out", in.name, applied, strings.Count(r.stdout, " left out: "))
		})
	}
}
