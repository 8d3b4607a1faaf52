/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/status"
)

const gatewayPodName = "gateway-7d9f8c6b5-x2x4q"

// testPod is a ready pod of component running on node-1 for an hour, with one
// container named as the component and a memory limit of 512Mi.
func testPod(name, component string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: map[string]string{v1alpha1.LabelName: component}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "onto-" + component,
			NodeName:           "node-1",
			Containers: []corev1.Container{{Name: component, Image: "registry.example.com/onto/" + component + ":1.5.0",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			StartTime:  ptrTime(ago(time.Hour)),
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: component, Ready: true,
				Image: "registry.example.com/onto/" + component + ":1.5.0",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}}},
		},
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// withPod sets the env's pods to one gateway pod changed by fn.
func withPod(fn func(p *corev1.Pod)) func(e *Env) {
	return func(e *Env) {
		p := testPod(gatewayPodName, v1alpha1.ComponentGateway)
		if fn != nil {
			fn(&p)
		}
		e.Pods = append(e.Pods, p)
	}
}

func healthyPod(e *Env) { withPod(nil)(e) }

func noPlatform(e *Env) { e.Platform = nil }

func TestAvailableCheck(t *testing.T) {
	components := func(e *Env) {
		e.Status = &status.Report{Ready: false, ReadyComponents: "1/2", Components: []status.Component{
			{Name: "postgres", Kind: "StatefulSet", Workload: "postgres", DesiredReplicas: 1, ReadyReplicas: 1, Ready: true},
			{Name: "gateway", Kind: "Deployment", Workload: "gateway", DesiredReplicas: 2, ReadyReplicas: 1,
				Message: "1 of 2 updated replicas available"},
			{Name: "gateway", Kind: "Deployment", Workload: "gateway-canary", DesiredReplicas: 1, Canary: true},
		}}
	}
	runCases(t, []checkCase{
		{name: "no platform", code: CodeNotAvailable, setup: noPlatform, skip: "no installed platform"},
		{name: "no live report", code: CodeNotAvailable},
		{name: "all ready", code: CodeNotAvailable, setup: func(e *Env) {
			e.Status = &status.Report{Ready: true, Components: []status.Component{
				{Name: "gateway", Kind: "Deployment", Workload: "gateway", DesiredReplicas: 2, ReadyReplicas: 2, Ready: true}}}
		}},
		{name: "one not ready, canary ignored", code: CodeNotAvailable, setup: components,
			want: []wantFinding{{severity: SeverityError, object: "deployment/gateway",
				evidence: []string{"component gateway: 1/2 ready: 1 of 2 updated replicas available"},
				fix:      []string{"kubectl describe deployment/gateway -n onto-system"}}}},
	})
}

func TestCrashLoopCheck(t *testing.T) {
	crashing := func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready, cs.RestartCount = false, 7
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: "panic: no database\ngoroutine 1", FinishedAt: ago(time.Minute)}}
	}
	events := func(e *Env) {
		e.Events = map[string][]corev1.Event{gatewayPodName: {
			{Reason: "BackOff", Message: "Back-off restarting failed container (first)"},
			{Reason: "Pulled", Message: "Container image already present"},
			{Reason: "BackOff", Message: "Back-off restarting failed container gateway in pod " + gatewayPodName},
			{Reason: "Started", Message: "Started container gateway"},
		}}
	}
	runCases(t, []checkCase{
		{name: "no platform", code: CodeCrashLoop, setup: noPlatform, skip: "no installed platform"},
		{name: "running", code: CodeCrashLoop, setup: healthyPod},
		{name: "crash-looping", code: CodeCrashLoop, setup: func(e *Env) { withPod(crashing)(e); events(e) },
			want: []wantFinding{{severity: SeverityError, object: "pod/" + gatewayPodName,
				evidence: []string{"container gateway: CrashLoopBackOff, 7 restarts", "last exit code 1 (Error): panic: no database goroutine 1",
					"last BackOff event: Back-off restarting failed container gateway in pod " + gatewayPodName},
				notEvidence: []string{"(first)"},
				fix:         []string{"kubectl logs -n onto-system " + gatewayPodName + " -c gateway --previous"}}}},
		{name: "crash-looping, no events", code: CodeCrashLoop, setup: withPod(crashing),
			want: []wantFinding{{severity: SeverityError, object: "pod/" + gatewayPodName,
				evidence: []string{"CrashLoopBackOff", "last exit code 1"}, notEvidence: []string{"BackOff event"}}}},
		{name: "init container", code: CodeCrashLoop, setup: withPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "wait-for-postgres", RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		}), want: []wantFinding{{severity: SeverityError, object: "pod/" + gatewayPodName,
			evidence: []string{"container wait-for-postgres: CrashLoopBackOff, 3 restarts"}, fix: []string{"-c wait-for-postgres --previous"}}}},
		{name: "terminating pod", code: CodeCrashLoop, setup: withPod(func(p *corev1.Pod) {
			crashing(p)
			p.DeletionTimestamp = ptrTime(ago(time.Second))
		})},
	})
}

// oomKilled makes the gateway container's last termination an OOM kill before.
func oomKilled(before time.Duration, limit string) func(p *corev1.Pod) {
	return func(p *corev1.Pod) {
		if limit == "" {
			p.Spec.Containers[0].Resources.Limits = nil
		} else {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
		}
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = 3
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", FinishedAt: ago(before)}}
	}
}

func TestOOMKilledCheck(t *testing.T) {
	obj := "pod/" + gatewayPodName
	runCases(t, []checkCase{
		{name: "no platform", code: CodeOOMKilled, setup: noPlatform, skip: "no installed platform"},
		{name: "running", code: CodeOOMKilled, setup: healthyPod},
		{name: "512Mi", code: CodeOOMKilled, setup: withPod(oomKilled(10*time.Minute, "512Mi")),
			want: []wantFinding{{severity: SeverityError, object: obj,
				evidence: []string{"container gateway was killed for exceeding its memory limit 10m ago (3 restarts); limit 512Mi"},
				fix:      []string{"raise spec.gateway.resources.limits.memory to 768Mi (×1.5 of 512Mi)", "kubectl onto apply"}}}},
		{name: "1Gi", code: CodeOOMKilled, setup: withPod(oomKilled(30*time.Minute, "1Gi")),
			want: []wantFinding{{severity: SeverityError, object: obj,
				evidence: []string{"limit 1Gi"}, fix: []string{"spec.gateway.resources.limits.memory to 1536Mi (×1.5 of 1Gi)"}}}},
		{name: "2Gi reads 3Gi", code: CodeOOMKilled, setup: withPod(oomKilled(30*time.Minute, "2Gi")),
			want: []wantFinding{{severity: SeverityError, object: obj, fix: []string{"to 3Gi (×1.5 of 2Gi)"}}}},
		{name: "another component's spec path", code: CodeOOMKilled, setup: func(e *Env) {
			p := testPod("reasoning-service-0", v1alpha1.ComponentReasoningService)
			oomKilled(5*time.Minute, "4Gi")(&p)
			e.Pods = []corev1.Pod{p}
		}, want: []wantFinding{{severity: SeverityError, object: "pod/reasoning-service-0",
			fix: []string{"raise spec.intelligencePlane.reasoningService.resources.limits.memory to 6Gi"}}}},
		{name: "no limit", code: CodeOOMKilled, setup: withPod(oomKilled(5*time.Minute, "")),
			want: []wantFinding{{severity: SeverityError, object: obj,
				notEvidence: []string{"; limit"}, fix: []string{"set spec.gateway.resources.limits.memory"}}}},
		{name: "unknown component", code: CodeOOMKilled, setup: withPod(func(p *corev1.Pod) {
			p.Labels[v1alpha1.LabelName] = "sidecar-thing"
			oomKilled(5*time.Minute, "512Mi")(p)
		}), want: []wantFinding{{severity: SeverityError, object: obj, fix: []string{"raise spec.<component>.resources.limits.memory to 768Mi"}}}},
		{name: "older than --since", code: CodeOOMKilled, setup: withPod(oomKilled(2*time.Hour, "512Mi"))},
		{name: "within a longer --since", code: CodeOOMKilled, setup: func(e *Env) {
			e.Since = 3 * time.Hour
			withPod(oomKilled(2*time.Hour, "512Mi"))(e)
		}, want: []wantFinding{{severity: SeverityError, object: obj, evidence: []string{"2h0m ago"}}}},
	})
}

func imagePull(reason string) func(p *corev1.Pod) {
	return func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.Image = "registry.example.com/onto/gateway:1.5.1"
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason,
			Message: `Back-off pulling image "registry.example.com/onto/gateway:1.5.1"`}}
	}
}

func TestImagePullCheck(t *testing.T) {
	obj := "pod/" + gatewayPodName
	withSA := func(e *Env) {
		e.ServiceAccounts = map[string]*corev1.ServiceAccount{"onto-gateway": {
			ObjectMeta:       metav1.ObjectMeta{Name: "onto-gateway", Namespace: testNamespace},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "mirror-cred"}}}}
	}
	runCases(t, []checkCase{
		{name: "no platform", code: CodeImagePull, setup: noPlatform, skip: "no installed platform"},
		{name: "running", code: CodeImagePull, setup: func(e *Env) { healthyPod(e); withSA(e) }},
		{name: "service account's secrets", code: CodeImagePull, setup: func(e *Env) { withPod(imagePull("ImagePullBackOff"))(e); withSA(e) },
			want: []wantFinding{{severity: SeverityError, object: obj,
				evidence: []string{"container gateway: ImagePullBackOff of image registry.example.com/onto/gateway:1.5.1",
					"pull secrets: regcred (service account onto-gateway), mirror-cred (service account onto-gateway)"},
				fix: []string{"spec.global.imageRegistry", "spec.global.imagePullSecrets"}}}},
		{name: "pod's own secret", code: CodeImagePull, setup: withPod(func(p *corev1.Pod) {
			imagePull("ErrImagePull")(p)
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "onto-pull"}}
		}), want: []wantFinding{{severity: SeverityError, object: obj,
			evidence: []string{"ErrImagePull of image registry.example.com/onto/gateway:1.5.1", "pull secrets: onto-pull"}}}},
		{name: "no secrets", code: CodeImagePull, setup: withPod(imagePull("ImagePullBackOff")),
			want: []wantFinding{{severity: SeverityError, object: obj,
				evidence: []string{"ImagePullBackOff", "no image pull secrets (pod or service account onto-gateway)"}}}},
		{name: "other waiting reason", code: CodeImagePull, setup: withPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		})},
	})
}

func pressureNode(name string, pressure ...corev1.NodeConditionType) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse},
	}}}
	for _, p := range pressure {
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == p {
				n.Status.Conditions[i].Status = corev1.ConditionTrue
				n.Status.Conditions[i].Message = "kubelet has " + string(p)
				n.Status.Conditions[i].LastTransitionTime = ago(20 * time.Minute)
			}
		}
	}
	return n
}

func TestEvictedCheck(t *testing.T) {
	evicted := func(p *corev1.Pod) {
		p.Spec.NodeName = "node-2"
		p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
			Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi."}
	}
	runCases(t, []checkCase{
		{name: "no platform", code: CodeEvicted, setup: noPlatform, skip: "no installed platform"},
		{name: "running", code: CodeEvicted, setup: healthyPod},
		{name: "failed, not evicted", code: CodeEvicted, setup: withPod(func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason = corev1.PodFailed, "DeadlineExceeded"
		})},
		{name: "evicted from a node under pressure", code: CodeEvicted, setup: func(e *Env) {
			withPod(evicted)(e)
			e.Nodes = []corev1.Node{pressureNode("node-1"), pressureNode("node-2", corev1.NodeMemoryPressure)}
		}, want: []wantFinding{{severity: SeverityError, object: "pod/" + gatewayPodName,
			evidence: []string{"evicted from node node-2 (now MemoryPressure): The node was low on resource: memory."},
			fix:      []string{"kubectl describe node node-2", "kubectl delete pod -n onto-system " + gatewayPodName}}}},
		{name: "evicted, pressure gone", code: CodeEvicted, setup: func(e *Env) {
			withPod(evicted)(e)
			e.Nodes = []corev1.Node{pressureNode("node-2")}
		}, want: []wantFinding{{severity: SeverityError, object: "pod/" + gatewayPodName,
			evidence: []string{"evicted from node node-2: The node"}, notEvidence: []string{"now"}}}},
	})
}

func pending(msg string) func(p *corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = ""
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg,
			LastTransitionTime: ago(5 * time.Minute)}}}
	}
}

func TestPendingCheck(t *testing.T) {
	obj := "pod/" + gatewayPodName
	runCases(t, []checkCase{
		{name: "no platform", code: CodePending, setup: noPlatform, skip: "no installed platform"},
		{name: "running", code: CodePending, setup: healthyPod},
		{name: "scheduled, containers creating", code: CodePending, setup: withPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		})},
		{name: "insufficient GPU", code: CodePending, setup: withPod(pending("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")),
			want: []wantFinding{{severity: SeverityError, object: obj,
				evidence: []string{"not scheduled for 5m: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu"},
				fix:      []string{"lower spec.gateway.resources.requests / replicas", "doctor --pre"}}}},
		{name: "untolerated taint", code: CodePending, setup: withPod(pending("0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}.")),
			want: []wantFinding{{severity: SeverityError, object: obj,
				evidence: []string{"untolerated taint"}, fix: []string{"spec.global.nodeSelector", "spec.global.tolerations"}}}},
		{name: "unbound claim", code: CodePending, setup: withPod(pending("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.")),
			want: []wantFinding{{severity: SeverityError, object: obj, fix: []string{"spec.global.storageClass"}}}},
		{name: "other reason", code: CodePending, setup: withPod(pending("something else")),
			want: []wantFinding{{severity: SeverityError, object: obj, fix: []string{"kubectl describe pod -n onto-system " + gatewayPodName}}}},
	})
}

func restarted(n int32) func(p *corev1.Pod) {
	return func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = n
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 2, Reason: "Error", FinishedAt: ago(30 * time.Minute)}}
	}
}

func TestRestartsCheck(t *testing.T) {
	runCases(t, []checkCase{
		{name: "no platform", code: CodeRestarts, setup: noPlatform, skip: "no installed platform"},
		{name: "no restarts", code: CodeRestarts, setup: healthyPod},
		{name: "at --max-restarts", code: CodeRestarts, setup: withPod(restarted(5))},
		{name: "over --max-restarts", code: CodeRestarts, setup: withPod(restarted(6)),
			want: []wantFinding{{severity: SeverityWarning, object: "pod/" + gatewayPodName,
				evidence: []string{"container gateway restarted 6 times (over 5)", "last exit code 2 (Error) 30m ago"},
				fix:      []string{"kubectl logs -n onto-system " + gatewayPodName + " -c gateway --previous"}}}},
		{name: "over a lower --max-restarts", code: CodeRestarts, setup: func(e *Env) {
			e.MaxRestarts = 0
			withPod(restarted(1))(e)
		}, want: []wantFinding{{severity: SeverityWarning, object: "pod/" + gatewayPodName, evidence: []string{"restarted 1 times (over 0)"}}}},
	})
}

// neverReady makes the gateway pod running since before and not ready.
func neverReady(before time.Duration) func(p *corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.StartTime = ptrTime(ago(before))
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
		p.Status.ContainerStatuses[0].Ready = false
	}
}

func TestNeverReadyCheck(t *testing.T) {
	runCases(t, []checkCase{
		{name: "no platform", code: CodeNeverReady, setup: noPlatform, skip: "no installed platform"},
		{name: "ready", code: CodeNeverReady, setup: healthyPod},
		{name: "never ready past --ready-grace", code: CodeNeverReady, setup: withPod(neverReady(10 * time.Minute)),
			want: []wantFinding{{severity: SeverityError, object: "pod/" + gatewayPodName,
				evidence: []string{"running for 10m and never ready"},
				fix:      []string{"kubectl describe pod -n onto-system " + gatewayPodName, "kubectl logs -n onto-system " + gatewayPodName}}}},
		{name: "within --ready-grace", code: CodeNeverReady, setup: withPod(neverReady(time.Minute))},
		{name: "ready once, restarted since", code: CodeNeverReady, setup: withPod(func(p *corev1.Pod) {
			neverReady(10 * time.Minute)(p)
			p.Status.ContainerStatuses[0].RestartCount = 1
		})},
		{name: "crash-looping: left to WRK-202", code: CodeNeverReady, setup: withPod(func(p *corev1.Pod) {
			neverReady(10 * time.Minute)(p)
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		})},
		{name: "terminating", code: CodeNeverReady, setup: withPod(func(p *corev1.Pod) {
			neverReady(10 * time.Minute)(p)
			p.DeletionTimestamp = ptrTime(ago(time.Second))
		})},
	})
}
