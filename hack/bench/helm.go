/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/internal/bench"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// helmRelease is the release name of the chart measured beside the platform.
const helmRelease = "onto"

// helmComparison is the wall times of each step, ours and Helm's, in run order.
type helmComparison struct {
	steps []string
	onto  map[string][]time.Duration
	helm  map[string][]time.Duration
	// pods is the number of pods left as each teardown command exited, per round.
	pods    map[string][]int
	podCmds []string
}

func (h *helmComparison) add(step string, onto, helm time.Duration) {
	if h.onto[step] == nil {
		h.steps = append(h.steps, step)
	}
	h.onto[step] = append(h.onto[step], onto)
	h.helm[step] = append(h.helm[step], helm)
}

// measureHelm times kubectl-onto beside Helm 4 on the same rendered objects, whole
// processes, interleaved (ours, then Helm's, each on a namespace of its own):
//
//   - install from empty to Ready: `kubectl-onto apply -f` vs `helm install --wait`
//     of a chart holding every object the platform renders;
//   - no-op: the same apply again vs `helm upgrade --wait` of the same chart;
//   - a log-level change, which rolls every workload: apply of the changed file vs
//     `helm upgrade --wait` of the chart rendered from it;
//   - emergency rollback (with rollbackFrom): both sides moved to that version first,
//     untimed (`kubectl-onto upgrade --to` without a soak, `helm upgrade --wait` of
//     the chart rendered at it), then `kubectl-onto rollback` (plane by plane, services
//     first, no canary) vs `helm rollback --wait` (every object at once) to the
//     example's version;
//   - teardown: `kubectl-onto uninstall` (the volumes kept) vs `helm uninstall --wait`,
//     which waits for its objects to be gone but not for their pods; and the same
//     uninstall vs Helm's followed by `kubectl wait --for=delete pods --all`, which
//     ends where ours does, every pod gone (ours waits for each plane's pods before
//     it deletes the plane before it); and the same uninstall vs `helm uninstall
//     --wait --cascade foreground` of a third release, Helm's own way to end there.
//     The pods left as each teardown exits are counted.
//
// Helm's namespace is made before its install (a release lives in it), ours by the
// install. Both keep the PersistentVolumeClaims; the namespaces go afterwards, untimed.
func measureHelm(ctx context.Context, out io.Writer, cl *bench.Cluster, kubectl bench.Kubectl, tmp, helmPath, kubeconfig, example string, rounds, changes int, rollbackFrom string, track func(ns string)) error {
	bin, err := buildPlugin(ctx, tmp)
	if err != nil {
		return err
	}
	version, err := exec.CommandContext(ctx, helmPath, "version", "--short").Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", helmPath, err)
	}
	h := &helmComparison{onto: map[string][]time.Duration{}, helm: map[string][]time.Duration{}}
	objects := 0
	for round := range rounds {
		logf("helm comparison, round %d/%d", round+1, rounds)
		nsOnto, nsHelm := bench.NamespaceName("bench"), bench.NamespaceName("helm")
		track(nsOnto)
		track(nsHelm)
		file, err := moveToNamespace(tmp, example, nsOnto)
		if err != nil {
			return err
		}
		chartInfo, err := writeChart(tmp, example, nsHelm, "INFO")
		if err != nil {
			return err
		}
		chartDebug, err := writeChart(tmp, example, nsHelm, "DEBUG")
		if err != nil {
			return err
		}
		objects = chartInfo.objects
		if err := cl.CreateNamespace(ctx, nsHelm); err != nil {
			return err
		}
		helm := func(args ...string) (time.Duration, error) {
			return timeHelm(ctx, helmPath, kubeconfig, nsHelm, args...)
		}
		onto := func(args ...string) (time.Duration, error) {
			return bench.TimePlugin(ctx, bin, kubeconfig, args...)
		}

		o, err := onto("apply", "-f", file)
		if err != nil {
			return err
		}
		hl, err := helm("install", helmRelease, chartInfo.dir, "--wait", "--wait-for-jobs", "--timeout", "15m")
		if err != nil {
			return err
		}
		h.add("install, empty to Ready", o, hl)

		if o, err = onto("apply", "-f", file); err != nil {
			return err
		}
		if hl, err = helm("upgrade", helmRelease, chartInfo.dir, "--wait", "--wait-for-jobs", "--timeout", "15m"); err != nil {
			return err
		}
		h.add("no-op", o, hl)

		// Each change flips the log level; the last one leaves INFO on both sides.
		for i := range changes {
			level, chart := "DEBUG", chartDebug.dir
			if i%2 == 1 {
				level, chart = "INFO", chartInfo.dir
			}
			if err := setLogLevel(file, level); err != nil {
				return err
			}
			if o, err = onto("apply", "-f", file); err != nil {
				return err
			}
			if hl, err = helm("upgrade", helmRelease, chart, "--wait", "--wait-for-jobs", "--timeout", "15m"); err != nil {
				return err
			}
			h.add("log-level change (every workload rolls)", o, hl)
		}

		if rollbackFrom != "" {
			chartNew, err := writeChartAt(tmp, example, nsHelm, "INFO", rollbackFrom)
			if err != nil {
				return err
			}
			logf("round %d: both sides to %s (untimed)", round+1, rollbackFrom)
			if _, err := onto("upgrade", chartInfo.platform, "-n", nsOnto, "--to", rollbackFrom, "--canary-soak", "0"); err != nil {
				return err
			}
			// --force-conflicts: the chart renders replicas for the Deployments the
			// autoscalers own by now (kube-controller-manager's scale subresource),
			// which Helm 4's server-side apply otherwise refuses.
			if _, err := helm("upgrade", helmRelease, chartNew.dir, "--wait", "--wait-for-jobs", "--force-conflicts", "--timeout", "15m"); err != nil {
				return err
			}
			if o, err = onto("rollback", chartInfo.platform, "-n", nsOnto); err != nil {
				return err
			}
			if hl, err = helm("rollback", helmRelease, "--wait", "--wait-for-jobs", "--force-conflicts", "--timeout", "15m"); err != nil {
				return err
			}
			h.add("emergency rollback "+rollbackFrom+" → the previous revision", o, hl)
		}

		if o, err = onto("uninstall", chartInfo.platform, "-n", nsOnto); err != nil {
			return err
		}
		if err := h.podsLeft(ctx, cl, "kubectl-onto uninstall", nsOnto); err != nil {
			return err
		}
		if hl, err = helm("uninstall", helmRelease, "--wait", "--timeout", "15m"); err != nil {
			return err
		}
		if err := h.podsLeft(ctx, cl, "helm uninstall --wait", nsHelm); err != nil {
			return err
		}
		pods, err := kubectl.WaitPodsDeleted(ctx, nsHelm)
		if err != nil {
			return err
		}
		h.add("teardown (volumes kept)", o, hl)
		h.add("teardown, until every pod is gone", o, hl+pods.Wall)
		// 10 minutes: the kept claims go with the namespace, and the test cluster's
		// pvc-protection controller was seen taking 3 minutes to release them.
		if err := cl.DeleteNamespaces(ctx, []string{nsOnto, nsHelm}, 10*time.Minute); err != nil {
			return err
		}

		// Helm's own way to end where ours does: with --cascade foreground each owner
		// it deletes waits for its dependents (ReplicaSets, then pods), and --wait for
		// the owners. Installed (untimed) once the two platforms above are gone: the
		// test cluster's GPU node fits two production platforms, not three.
		nsFg := bench.NamespaceName("helm-fg")
		track(nsFg)
		chartFg, err := writeChart(tmp, example, nsFg, "INFO")
		if err != nil {
			return err
		}
		if err := cl.CreateNamespace(ctx, nsFg); err != nil {
			return err
		}
		if _, err := timeHelm(ctx, helmPath, kubeconfig, nsFg, "install", helmRelease, chartFg.dir, "--wait", "--wait-for-jobs", "--timeout", "15m"); err != nil {
			return err
		}
		hf, err := timeHelm(ctx, helmPath, kubeconfig, nsFg, "uninstall", helmRelease, "--wait", "--cascade", "foreground", "--timeout", "15m")
		if err != nil {
			return err
		}
		if err := h.podsLeft(ctx, cl, "helm uninstall --wait --cascade foreground", nsFg); err != nil {
			return err
		}
		h.add("teardown vs helm --cascade foreground (both end with every pod gone)", o, hf)
		if err := cl.DeleteNamespace(ctx, nsFg, 10*time.Minute); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nkubectl-onto vs %s, %s, against %s\n", strings.TrimSpace(string(version)), time.Now().Format(time.RFC3339), cl.Config.Host)
	fmt.Fprintf(out, "production example, %d objects in the chart; whole processes, start to exit, interleaved (ours, then Helm's); medians over %d rounds\n", objects, rounds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\truns\tkubectl-onto\thelm\tratio\tkubectl-onto runs\thelm runs\t")
	for _, step := range h.steps {
		mo, mh := bench.Median(h.onto[step]), bench.Median(h.helm[step])
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\t%s\t%s\t\n", step, len(h.onto[step]), secs(mo), secs(mh), bench.Ratio(mo, mh), durations(h.onto[step]), durations(h.helm[step]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "pods left in the namespace as each teardown command exited, per round:")
	for _, cmd := range h.podCmds {
		fmt.Fprintf(out, "  %-45s %v\n", cmd, h.pods[cmd])
	}
	return nil
}

// podsLeft records how many pods are left in namespace ns as cmd, a teardown, has
// just exited: what a user who runs the next command finds still terminating.
func (h *helmComparison) podsLeft(ctx context.Context, cl *bench.Cluster, cmd, ns string) error {
	list, err := cl.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the pods left in %s after %s: %w", ns, cmd, err)
	}
	if h.pods == nil {
		h.pods = map[string][]int{}
	}
	if h.pods[cmd] == nil {
		h.podCmds = append(h.podCmds, cmd)
	}
	h.pods[cmd] = append(h.pods[cmd], len(list.Items))
	return nil
}

// timeHelm runs helm with args in namespace ns and returns its wall time, start to exit.
// Helm gets the client-side rate limits of kubectl-onto's clients (kube.DefaultQPS and
// kube.DefaultBurst), so throttling does not decide the comparison.
func timeHelm(ctx context.Context, helmPath, kubeconfig, ns string, args ...string) (time.Duration, error) {
	return bench.TimeCommand(ctx, nil, helmPath, append(args, "--kubeconfig", kubeconfig, "--namespace", ns,
		"--qps", strconv.Itoa(kube.DefaultQPS), "--burst-limit", strconv.Itoa(kube.DefaultBurst))...)
}

// chart is a Helm chart written by writeChart.
type chart struct {
	dir     string
	objects int
	// platform is the name of the OntoPlatform the objects were rendered from.
	platform string
}

// writeChart writes a chart holding every object the example renders in namespace ns
// at log level level: the plane objects as `kubectl-onto apply` writes them, but not
// the Namespace (the release lives in it), the CRD or the OntoPlatform (Helm's release
// is its own record of what it installed), and with placeholder bytes in the TLS
// Secrets kubectl-onto issues when it applies.
func writeChart(tmp, example, ns, level string) (chart, error) {
	return writeChartAt(tmp, example, ns, level, "")
}

// writeChartAt is writeChart with the example's spec.version set to version (none:
// the example's own).
func writeChartAt(tmp, example, ns, level, version string) (chart, error) {
	dir := filepath.Join(tmp, "chart-"+ns+"-"+strings.ToLower(level)+version)
	file, err := moveToNamespace(tmp, example, ns)
	if err != nil {
		return chart{}, err
	}
	if err := setLogLevel(file, level); err != nil {
		return chart{}, err
	}
	if version != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return chart{}, err
		}
		re := regexp.MustCompile(`(?m)^(  version: ).*$`)
		if !re.Match(data) {
			return chart{}, fmt.Errorf("%s has no spec.version line", file)
		}
		if err := os.WriteFile(file, re.ReplaceAll(data, []byte("${1}\""+version+"\"")), 0o644); err != nil {
			return chart{}, err
		}
	}
	d, err := bench.Desired(file, ns)
	if err != nil {
		return chart{}, err
	}
	var buf bytes.Buffer
	n := 0
	for _, o := range d.Objects() {
		if o.GetKind() == "Namespace" {
			continue
		}
		if plan.IsCertificate(o) || plan.IsCertificateAuthority(o) {
			// kubectl-onto issues these at apply time; the API server wants the keys of
			// a kubernetes.io/tls Secret, whatever their bytes.
			o = o.DeepCopy()
			placeholder := base64.StdEncoding.EncodeToString([]byte("issued by kubectl-onto at apply time"))
			_ = unstructured.SetNestedStringMap(o.Object, map[string]string{"tls.crt": placeholder, "tls.key": placeholder}, "data")
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return chart{}, fmt.Errorf("marshal %s: %w", kube.Ref(o), err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
		n++
	}
	if bytes.Contains(buf.Bytes(), []byte("{{")) {
		return chart{}, fmt.Errorf("the rendered objects hold %q, which Helm would read as a template", "{{")
	}
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		return chart{}, err
	}
	meta := "apiVersion: v2\nname: onto-bench\nversion: 0.1.0\ndescription: the objects of the production example, for timing beside kubectl-onto\n"
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(meta), 0o644); err != nil {
		return chart{}, err
	}
	return chart{dir: dir, objects: n, platform: d.Platform.GetName()}, os.WriteFile(filepath.Join(dir, "templates", "objects.yaml"), buf.Bytes(), 0o644)
}

// setLogLevel sets spec.observability.logging.level in the platform file.
func setLogLevel(file, level string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	re := regexp.MustCompile(`(?m)^(      level: ).*$`)
	if !re.Match(data) {
		return fmt.Errorf("%s has no logging level line", file)
	}
	return os.WriteFile(file, re.ReplaceAll(data, []byte("${1}"+level)), 0o644)
}
