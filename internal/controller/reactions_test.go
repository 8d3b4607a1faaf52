/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package controller

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

var reactNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type reactEnv struct {
	r      *Reconciler
	kube   *kubefake.Clientset
	rec    *events.FakeRecorder
	audit  *bytes.Buffer
	p      *v1alpha1.OntoPlatform
	now    time.Time
	evicts []string
}

// newReactEnv is a Reconciler whose cache (a fake client) and API server (a fake
// clientset) hold objs.
func newReactEnv(t *testing.T, objs ...client.Object) *reactEnv {
	t.Helper()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "onto"}}
	cl := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithIndex(&corev1.Pod{}, podNodeNameField, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}).Build()
	var rt []runtime.Object
	for _, o := range objs {
		rt = append(rt, o.DeepCopyObject())
	}
	e := &reactEnv{kube: kubefake.NewClientset(rt...), rec: events.NewFakeRecorder(100), audit: &bytes.Buffer{}, p: p, now: reactNow}
	e.kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		e.evicts = append(e.evicts, a.(clienttesting.CreateAction).GetObject().(metav1.Object).GetName())
		return true, nil, nil
	})
	e.r = &Reconciler{Client: cl, Clients: &kube.Clients{Kube: e.kube}, Recorder: e.rec, Audit: NewAuditLog(e.audit),
		Now: func() time.Time { return e.now }, Reactions: NewReactions(DefaultNodeGrace, DefaultEvictedPodTTL)}
	return e
}

func (e *reactEnv) react() { e.r.react(context.Background(), e.p) }

func (e *reactEnv) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func (e *reactEnv) podExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := e.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

func platformPod(name, component string, owner metav1.OwnerReference, node string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			Labels:          map[string]string{v1alpha1.LabelName: component, v1alpha1.LabelInstance: "onto", v1alpha1.LabelManagedBy: managedBy},
			OwnerReferences: []metav1.OwnerReference{owner}},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: component}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	switch owner.Kind {
	case "ReplicaSet":
		pod.Labels["pod-template-hash"] = strings.TrimPrefix(owner.Name, component+"-")
	case "StatefulSet":
		pod.Labels["controller-revision-hash"] = owner.Name + "-abc"
	}
	return pod
}

func ownedBy(kind, name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: ptr.To(true)}
}

func crashLoop(pod *corev1.Pod, restarts int32) *corev1.Pod {
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, RestartCount: restarts,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}
	return pod
}

func TestReactionsCrashLoopOncePerRevision(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-service-7f9", CreationTimestamp: metav1.NewTime(reactNow.Add(-10 * time.Minute))}}
	old := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gateway-1a2", CreationTimestamp: metav1.NewTime(reactNow.Add(-3 * time.Hour))}}
	e := newReactEnv(t, rs, old,
		crashLoop(platformPod("data-service-7f9-a", "data-service", ownedBy("ReplicaSet", rs.Name), "n1"), 4),
		crashLoop(platformPod("data-service-7f9-b", "data-service", ownedBy("ReplicaSet", rs.Name), "n1"), 2),
		crashLoop(platformPod("gateway-1a2-a", "gateway", ownedBy("ReplicaSet", old.Name), "n1"), 9))
	for range 3 {
		e.react()
		e.now = e.now.Add(15 * time.Second)
	}
	evs := e.events()
	if len(evs) != 2 {
		t.Fatalf("want one Event per crash-looping revision (2), got %d:\n%s", len(evs), strings.Join(evs, "\n"))
	}
	for _, want := range []string{"Warning CrashLoopBackOff data-service revision 7f9: container data-service of pod data-service-7f9-a", "last exit code 3 (Error), 4 restarts", "changed 10m0s ago (ReplicaSet data-service-7f9"} {
		if !strings.Contains(evs[0], want) {
			t.Errorf("Event %q does not say %q", evs[0], want)
		}
	}
	if !strings.Contains(evs[1], "gateway revision 1a2") || !strings.Contains(evs[1], "did not change within the hour") {
		t.Errorf("Event of an old revision: %s", evs[1])
	}
	if n := strings.Count(e.audit.String(), `"action":"report-crashloop"`); n != 2 {
		t.Errorf("%d audit lines, want 2:\n%s", n, e.audit)
	}
	for _, name := range []string{"data-service-7f9-a", "data-service-7f9-b", "gateway-1a2-a"} {
		if !e.podExists(t, name) {
			t.Errorf("pod %s deleted", name)
		}
	}
	// Forgotten after an hour unseen: a crash loop that comes back is reported again.
	e.r.Reactions.forget(e.now.Add(2 * time.Hour))
	e.react()
	if evs := e.events(); len(evs) != 2 {
		t.Errorf("after the memory expired: %d Events, want 2", len(evs))
	}
}

func evicted(pod *corev1.Pod, at time.Time) *corev1.Pod {
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory.",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(at.Add(time.Second))},
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)},
		}}
	return pod
}

func TestReactionsEvicted(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse},
	}}}
	e := newReactEnv(t, node, evicted(platformPod("nessie-1-a", "nessie", ownedBy("ReplicaSet", "nessie-1"), "n1"), reactNow.Add(-time.Minute)))
	e.react()
	e.react()
	evs := e.events()
	if len(evs) != 1 || !strings.Contains(evs[0], "Warning Evicted pod nessie-1-a (nessie) was evicted from node n1 (MemoryPressure): The node was low on resource: memory.") {
		t.Fatalf("Events: %q", evs)
	}
	if !e.podExists(t, "nessie-1-a") {
		t.Fatal("deleted a minute after its eviction")
	}
	e.now = reactNow.Add(4 * time.Minute) // 5 min after the DisruptionTarget condition
	e.react()
	if e.podExists(t, "nessie-1-a") {
		t.Fatal("not deleted 5 minutes after its eviction")
	}
	if !strings.Contains(e.audit.String(), `"action":"delete-evicted-pod","object":"Pod ns/nessie-1-a","reason":"evicted"`) {
		t.Errorf("audit:\n%s", e.audit)
	}
	if evs := e.events(); len(evs) != 0 {
		t.Errorf("more Events: %q", evs)
	}
}

func TestEvictedAt(t *testing.T) {
	first := reactNow
	at := reactNow.Add(-time.Hour)
	if got := evictedAt(evicted(&corev1.Pod{}, at), first); !got.Equal(at) {
		t.Errorf("with a DisruptionTarget condition: %s, want %s", got, at)
	}
	pod := evicted(&corev1.Pod{}, at)
	pod.Status.Conditions = pod.Status.Conditions[:1]
	if got := evictedAt(pod, first); !got.Equal(at.Add(time.Second)) {
		t.Errorf("with a Ready condition only: %s", got)
	}
	pod.Status.Conditions = nil
	if got := evictedAt(pod, first); !got.Equal(first) {
		t.Errorf("with no condition: %s", got)
	}
}

func notReadyNode(name string, since time.Time) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + types.UID(name)}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(since)},
	}}}
}

func TestReactionsLostNode(t *testing.T) {
	// The watch saw the node NotReady 30 s after its transition: the grace counts
	// from then.
	e := newReactEnv(t, notReadyNode("lost", reactNow.Add(-60*time.Second)),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ok"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}},
		platformPod("gateway-1-a", "gateway", ownedBy("ReplicaSet", "gateway-1"), "lost"),
		platformPod("gateway-1-b", "gateway", ownedBy("ReplicaSet", "gateway-1"), "ok"),
		platformPod("postgres-0", "postgres", ownedBy("StatefulSet", "postgres"), "lost"))
	e.now = reactNow.Add(-30 * time.Second)
	e.react()
	e.now = reactNow.Add(29 * time.Second)
	e.react()
	if len(e.evicts) != 0 || len(e.events()) != 0 {
		t.Fatalf("within the node grace: evictions %q", e.evicts)
	}
	e.now = reactNow.Add(31 * time.Second) // NotReady for 61 s since seen
	e.react()
	e.react()
	if strings.Join(e.evicts, ",") != "gateway-1-a" {
		t.Errorf("evictions %q, want gateway-1-a once", e.evicts)
	}
	evs := e.events()
	if len(evs) != 2 {
		t.Fatalf("Events: %q", evs)
	}
	if !strings.Contains(evs[0], "Warning NodeLost pod gateway-1-a (gateway) evicted from node lost, NotReady for 1m1s (Ready=Unknown: NodeStatusUnknown)") {
		t.Errorf("Event of the eviction: %s", evs[0])
	}
	if !strings.Contains(evs[1], "pod postgres-0 of StatefulSet postgres is on node lost") ||
		!strings.Contains(evs[1], "kubectl taint node lost node.kubernetes.io/out-of-service=nodeshutdown:NoExecute") {
		t.Errorf("Event of the StatefulSet pod: %s", evs[1])
	}
	if !e.podExists(t, "postgres-0") {
		t.Error("postgres-0 deleted")
	}
	for _, want := range []string{`"action":"evict-pod","object":"Pod ns/gateway-1-a","reason":"lost-node"`, `"action":"report-node-lost","object":"Pod ns/postgres-0","reason":"lost-node"`} {
		if !strings.Contains(e.audit.String(), want) {
			t.Errorf("audit has no %s:\n%s", want, e.audit)
		}
	}
}

func TestReactionsLostNodePDBRefusal(t *testing.T) {
	e := newReactEnv(t, notReadyNode("lost", reactNow.Add(-2*time.Minute)),
		platformPod("gateway-1-a", "gateway", ownedBy("ReplicaSet", "gateway-1"), "lost"))
	refuse := true
	e.kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" && refuse {
			return true, nil, apierrorsTooMany()
		}
		return false, nil, nil
	})
	e.now = reactNow.Add(-2 * time.Minute) // seen NotReady at its transition
	e.react()
	e.now = reactNow
	e.react()
	if len(e.evicts) != 0 || len(e.events()) != 0 || strings.Contains(e.audit.String(), "evict-pod") {
		t.Fatalf("a refused eviction recorded as done: %q\n%s", e.evicts, e.audit)
	}
	refuse = false
	e.react()
	if len(e.evicts) != 1 {
		t.Fatalf("not retried after the refusal: %q", e.evicts)
	}
}

func TestPodFailingPredicate(t *testing.T) {
	rs := NewReactions(DefaultNodeGrace, DefaultEvictedPodTTL)
	pred := rs.podFailing()
	healthy := platformPod("gateway-1-a", "gateway", ownedBy("ReplicaSet", "gateway-1"), "n")
	churned := healthy.DeepCopy()
	churned.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if pred.Update(event.UpdateEvent{ObjectOld: healthy, ObjectNew: churned}) {
		t.Error("a healthy pod's status update passes")
	}
	looping := crashLoop(healthy.DeepCopy(), 1)
	if !pred.Update(event.UpdateEvent{ObjectOld: healthy, ObjectNew: looping}) {
		t.Error("a new crash loop does not pass")
	}
	rs.mark(crashLoopKey(looping), reactNow)
	if pred.Update(event.UpdateEvent{ObjectOld: looping, ObjectNew: crashLoop(healthy.DeepCopy(), 2)}) {
		t.Error("a reported crash loop's restart passes")
	}
	ev := evicted(healthy.DeepCopy(), reactNow)
	if !pred.Update(event.UpdateEvent{ObjectOld: healthy, ObjectNew: ev}) {
		t.Error("an eviction does not pass")
	}
	if pred.Delete(event.DeleteEvent{Object: healthy}) {
		t.Error("a deletion passes")
	}

	nodes := nodeReadyChanged()
	ready := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(reactNow)}}}}
	beat := ready.DeepCopy()
	beat.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(reactNow.Add(time.Minute))
	if nodes.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: beat}) {
		t.Error("a node's heartbeat passes")
	}
	if !nodes.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: notReadyNode("n", reactNow)}) {
		t.Error("a node turning NotReady does not pass")
	}
}

func TestSlimNode(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"x"}}}, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady}}}}
	out, err := slimNode(n)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Node)
	if got.Status.Images != nil || got.ManagedFields != nil || len(got.Status.Conditions) != 1 {
		t.Errorf("slimmed node: %+v", got)
	}
}

func apierrorsTooMany() error {
	return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
}
