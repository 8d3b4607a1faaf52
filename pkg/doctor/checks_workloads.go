/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Codes of the workload checks.
const (
	CodeNotAvailable = "ONTO-WRK-201"
	CodeCrashLoop    = "ONTO-WRK-202"
	CodeOOMKilled    = "ONTO-WRK-203"
	CodeImagePull    = "ONTO-WRK-204"
	CodeEvicted      = "ONTO-WRK-205"
	CodePending      = "ONTO-WRK-206"
	CodeRestarts     = "ONTO-WRK-207"
	CodeNeverReady   = "ONTO-WRK-208"
)

// oomFactor is how much more memory WRK-203 suggests: the factor watch's remediation
// uses by default.
const oomFactor = 1.5

func workloadChecks() []Check {
	return []Check{
		{Code: CodeNotAvailable, Category: CategoryWorkloads, Description: "every component available", Skip: needsPlatform, Run: checkAvailable},
		{Code: CodeCrashLoop, Category: CategoryWorkloads, Description: "no container crash-looping", Skip: needsPlatform, Run: checkCrashLoop},
		{Code: CodeOOMKilled, Category: CategoryWorkloads, Description: "no container OOM-killed recently", Skip: needsPlatform, Run: checkOOMKilled},
		{Code: CodeImagePull, Category: CategoryWorkloads, Description: "every image pulls", Skip: needsPlatform, Run: checkImagePull},
		{Code: CodeEvicted, Category: CategoryWorkloads, Description: "no pod evicted", Skip: needsPlatform, Run: checkEvicted},
		{Code: CodePending, Category: CategoryWorkloads, Description: "no pod stuck Pending", Skip: needsPlatform, Run: checkPending},
		{Code: CodeRestarts, Category: CategoryWorkloads, Description: "restarts within --max-restarts", Skip: needsPlatform, Run: checkRestarts},
		{Code: CodeNeverReady, Category: CategoryWorkloads, Description: "every running pod became ready", Skip: needsPlatform, Run: checkNeverReady},
		{Code: CodePostgresPrimary, Category: CategoryWorkloads, Description: "the postgres primary is ready", Skip: skipPostgresPrimary, Run: checkPostgresPrimary},
	}
}

func checkAvailable(env *Env) []Finding {
	if env.Status == nil {
		return nil
	}
	var out []Finding
	for _, c := range env.Status.Components {
		if c.Ready || c.Canary {
			continue
		}
		f := Finding{Object: objectName(c.Kind, c.Workload),
			Evidence: fmt.Sprintf("component %s: %d/%d ready", c.Name, c.ReadyReplicas, c.DesiredReplicas)}
		if c.Message != "" {
			f.Evidence += ": " + c.Message
		}
		f.Fix = fmt.Sprintf("kubectl describe %s -n %s; the pod findings below say why", f.Object, env.Namespace)
		out = append(out, f)
	}
	return out
}

// podFindings runs fn over every container status of every platform pod, in name order.
func podFindings(env *Env, fn func(pod *corev1.Pod, cs corev1.ContainerStatus) *Finding) []Finding {
	pods := sortedPods(env)
	var out []Finding
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			if f := fn(pod, cs); f != nil {
				if f.Object == "" {
					f.Object = "pod/" + pod.Name
				}
				out = append(out, *f)
			}
		}
	}
	return out
}

func sortedPods(env *Env) []*corev1.Pod {
	pods := make([]*corev1.Pod, len(env.Pods))
	for i := range env.Pods {
		pods[i] = &env.Pods[i]
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

func checkCrashLoop(env *Env) []Finding {
	return podFindings(env, func(pod *corev1.Pod, cs corev1.ContainerStatus) *Finding {
		w := cs.State.Waiting
		if w == nil || w.Reason != "CrashLoopBackOff" {
			return nil
		}
		ev := fmt.Sprintf("container %s: CrashLoopBackOff, %d restarts", cs.Name, cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil {
			ev += fmt.Sprintf("; last exit code %d (%s)", t.ExitCode, t.Reason)
			if t.Message != "" {
				ev += ": " + oneLine(t.Message)
			}
		}
		if e := lastEvent(env, pod.Name, "BackOff"); e != nil {
			ev += "; last BackOff event: " + oneLine(e.Message)
		}
		return &Finding{Evidence: ev,
			Fix: fmt.Sprintf("kubectl logs -n %s %s -c %s --previous", pod.Namespace, pod.Name, cs.Name)}
	})
}

func checkOOMKilled(env *Env) []Finding {
	return podFindings(env, func(pod *corev1.Pod, cs corev1.ContainerStatus) *Finding {
		t := cs.LastTerminationState.Terminated
		if t == nil || t.Reason != "OOMKilled" {
			return nil
		}
		if !t.FinishedAt.IsZero() && env.Now.Sub(t.FinishedAt.Time) > env.Since {
			return nil
		}
		ev := fmt.Sprintf("container %s was killed for exceeding its memory limit %s ago (%d restarts)", cs.Name, age(env.Now, t.FinishedAt.Time), cs.RestartCount)
		f := &Finding{Evidence: ev}
		limit := containerLimit(pod, cs.Name, corev1.ResourceMemory)
		component := pod.Labels[v1alpha1.LabelName]
		if limit != nil {
			f.Evidence += fmt.Sprintf("; limit %s", limit.String())
		}
		f.Fix = oomFix(env, component, limit)
		return f
	})
}

// oomFix names the spec field that sets the component's memory limit and a value
// oomFactor higher.
func oomFix(env *Env, component string, limit *resource.Quantity) string {
	path := "spec.<component>"
	if env.Platform != nil {
		if c, ok := env.Platform.Spec.Component(component); ok {
			path = c.SpecPath
		}
	}
	field := path + ".resources.limits.memory"
	if limit == nil {
		return "set " + field
	}
	raised := resource.NewQuantity(int64(float64(limit.Value())*oomFactor), resource.BinarySI)
	return fmt.Sprintf("raise %s to %s (×%.1f of %s), then kubectl onto apply", field, roundMi(raised), oomFactor, limit.String())
}

// roundMi rounds a memory quantity up to whole MiB, so the suggestion reads 768Mi,
// not 805306368.
func roundMi(q *resource.Quantity) string {
	const mi = 1 << 20
	v := (q.Value() + mi - 1) / mi
	if v%1024 == 0 {
		return fmt.Sprintf("%dGi", v/1024)
	}
	return fmt.Sprintf("%dMi", v)
}

func containerLimit(pod *corev1.Pod, name string, res corev1.ResourceName) *resource.Quantity {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == name {
			if q, ok := c.Resources.Limits[res]; ok {
				return &q
			}
		}
	}
	return nil
}

func checkImagePull(env *Env) []Finding {
	return podFindings(env, func(pod *corev1.Pod, cs corev1.ContainerStatus) *Finding {
		w := cs.State.Waiting
		if w == nil || (w.Reason != "ImagePullBackOff" && w.Reason != "ErrImagePull" && w.Reason != "InvalidImageName") {
			return nil
		}
		ev := fmt.Sprintf("container %s: %s of image %s", cs.Name, w.Reason, cs.Image)
		if w.Message != "" {
			ev += ": " + oneLine(w.Message)
		}
		secrets := pullSecrets(env, pod)
		if len(secrets) == 0 {
			ev += "; no image pull secrets (pod or service account " + pod.Spec.ServiceAccountName + ")"
		} else {
			ev += "; pull secrets: " + strings.Join(secrets, ", ")
		}
		return &Finding{Evidence: ev,
			Fix: "check the image exists (spec.global.imageRegistry, the component's image) and the registry's credentials (spec.global.imagePullSecrets)"}
	})
}

// pullSecrets are the names of the image pull secrets a pod uses: its own and its
// service account's.
func pullSecrets(env *Env, pod *corev1.Pod) []string {
	var out []string
	for _, s := range pod.Spec.ImagePullSecrets {
		out = append(out, s.Name)
	}
	if sa := env.ServiceAccounts[pod.Spec.ServiceAccountName]; sa != nil {
		for _, s := range sa.ImagePullSecrets {
			out = append(out, s.Name+" (service account "+sa.Name+")")
		}
	}
	return out
}

func checkEvicted(env *Env) []Finding {
	var out []Finding
	for _, pod := range sortedPods(env) {
		if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != "Evicted" {
			continue
		}
		ev := "evicted"
		if pod.Spec.NodeName != "" {
			ev += " from node " + pod.Spec.NodeName
			if p := nodePressure(env, pod.Spec.NodeName); p != "" {
				ev += " (now " + p + ")"
			}
		}
		if pod.Status.Message != "" {
			ev += ": " + oneLine(pod.Status.Message)
		}
		out = append(out, Finding{Object: "pod/" + pod.Name, Evidence: ev,
			Fix: fmt.Sprintf("check the node's pressure and the component's requests (kubectl describe node %s); kubectl delete pod -n %s %s removes the record", pod.Spec.NodeName, pod.Namespace, pod.Name)})
	}
	return out
}

func checkPending(env *Env) []Finding {
	var out []Finding
	for _, pod := range sortedPods(env) {
		if pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
			continue
		}
		for _, c := range pod.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse {
				continue
			}
			ev := fmt.Sprintf("not scheduled for %s", age(env.Now, c.LastTransitionTime.Time))
			if c.Message != "" {
				ev += ": " + oneLine(c.Message)
			}
			out = append(out, Finding{Object: "pod/" + pod.Name, Evidence: ev, Fix: pendingFix(env, pod, c.Message)})
		}
	}
	return out
}

// pendingFix suggests what to change from the scheduler's message.
func pendingFix(env *Env, pod *corev1.Pod, msg string) string {
	path := "spec.<component>"
	if env.Platform != nil {
		if c, ok := env.Platform.Spec.Component(pod.Labels[v1alpha1.LabelName]); ok {
			path = c.SpecPath
		}
	}
	switch {
	case strings.Contains(msg, "Insufficient"):
		return fmt.Sprintf("add nodes with room, or lower %s.resources.requests / replicas (doctor --pre shows the capacity)", path)
	case strings.Contains(msg, "taint") || strings.Contains(msg, "node affinity") || strings.Contains(msg, "selector"):
		return "match the nodes: spec.global.nodeSelector and spec.global.tolerations"
	case strings.Contains(msg, "persistentvolumeclaim") || strings.Contains(msg, "PersistentVolumeClaim"):
		return "check the claims' storage class (spec.global.storageClass) and provisioner"
	}
	return fmt.Sprintf("kubectl describe pod -n %s %s", pod.Namespace, pod.Name)
}

func checkRestarts(env *Env) []Finding {
	return podFindings(env, func(pod *corev1.Pod, cs corev1.ContainerStatus) *Finding {
		if cs.RestartCount <= env.MaxRestarts {
			return nil
		}
		ev := fmt.Sprintf("container %s restarted %d times (over %d)", cs.Name, cs.RestartCount, env.MaxRestarts)
		if t := cs.LastTerminationState.Terminated; t != nil {
			ev += fmt.Sprintf("; last exit code %d (%s) %s ago", t.ExitCode, t.Reason, age(env.Now, t.FinishedAt.Time))
		}
		return &Finding{Severity: SeverityWarning, Evidence: ev,
			Fix: fmt.Sprintf("kubectl logs -n %s %s -c %s --previous", pod.Namespace, pod.Name, cs.Name)}
	})
}

func checkNeverReady(env *Env) []Finding {
	var out []Finding
	for _, pod := range sortedPods(env) {
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil || pod.Status.StartTime == nil {
			continue
		}
		if env.Now.Sub(pod.Status.StartTime.Time) < env.ReadyGrace || everReady(pod) || crashLooping(pod) {
			continue
		}
		out = append(out, Finding{Object: "pod/" + pod.Name,
			Evidence: fmt.Sprintf("running for %s and never ready: its readiness probe has not passed", age(env.Now, pod.Status.StartTime.Time)),
			Fix:      fmt.Sprintf("kubectl describe pod -n %s %s (probe failures are its events); kubectl logs -n %s %s", pod.Namespace, pod.Name, pod.Namespace, pod.Name)})
	}
	return out
}

// everReady: Ready now, or a container that was ready once (it restarted since) or is
// started and ready.
func everReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Ready || cs.RestartCount > 0 {
			return true
		}
	}
	return false
}

func crashLooping(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return true
		}
	}
	return false
}

// lastEvent is the newest event of reason about pod, nil when none was gathered.
func lastEvent(env *Env, pod, reason string) *corev1.Event {
	events := env.Events[pod]
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Reason == reason {
			return &events[i]
		}
	}
	return nil
}

func oneLine(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}
