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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/internal/ontotest"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

func quota(name, hard, used string) corev1.ResourceQuota {
	return corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourceLimitsMemory: resource.MustParse(hard)},
		Used: corev1.ResourceList{corev1.ResourceLimitsMemory: resource.MustParse(used)},
	}}
}

func TestRaiseMemory(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := []struct {
		name     string
		current  string
		factor   string
		max      *resource.Quantity
		quotas   []corev1.ResourceQuota
		replicas int32
		want     string
		capped   string
		wantErr  bool
	}{
		{name: "factor", current: "512Mi", factor: "1.5", want: "768Mi"},
		{name: "rounded up to whole MiB", current: "1000Mi", factor: "1.25", want: "1250Mi"},
		{name: "fraction of a MiB rounds up", current: "100M", factor: "1.5", want: "144Mi"}, // 150000000 B = 143.05 MiB
		{name: "factor 4", current: "1Gi", factor: "4", want: "4Gi"},
		{name: "capped by max", current: "1536Mi", factor: "1.5", max: q("2Gi"), want: "2Gi", capped: "max 2Gi"},
		{name: "max at the limit refuses", current: "2Gi", factor: "1.5", max: q("2Gi"), want: "2Gi", capped: "max 2Gi"},
		{name: "quota headroom for two replicas", current: "512Mi", factor: "2", replicas: 2,
			quotas: []corev1.ResourceQuota{quota("tenant", "4Gi", "3584Mi")}, want: "768Mi", capped: "ResourceQuota tenant"},
		{name: "quota with room", current: "512Mi", factor: "1.5", replicas: 2,
			quotas: []corev1.ResourceQuota{quota("tenant", "8Gi", "1Gi")}, want: "768Mi"},
		{name: "quota full refuses", current: "512Mi", factor: "1.5", replicas: 1,
			quotas: []corev1.ResourceQuota{quota("tenant", "4Gi", "4Gi")}, want: "512Mi", capped: "ResourceQuota tenant"},
		{name: "factor 1 is refused", current: "512Mi", factor: "1", wantErr: true},
		{name: "factor above 4 is refused", current: "512Mi", factor: "4.5", wantErr: true},
		{name: "factor not a number", current: "512Mi", factor: "x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, capped, err := raiseMemory(resource.MustParse(tt.current), tt.factor, tt.max, tt.quotas, tt.replicas)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error; got %s", got.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := resource.MustParse(tt.want); got.Cmp(want) != 0 || got.Value()%mebibyte != 0 {
				t.Errorf("raise of %s × %s = %s, want %s", tt.current, tt.factor, got.String(), tt.want)
			}
			if (tt.capped == "") != (capped == "") || !strings.Contains(capped, tt.capped) {
				t.Errorf("capped %q, want one naming %q", capped, tt.capped)
			}
		})
	}
}

func TestRemediationBookkeeping(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(reactNow.Add(time.Duration(m) * time.Minute)) }
	rems := []v1alpha1.Remediation{
		{Component: "nessie", Container: "nessie", To: "768Mi", Time: at(0)},
		{Component: "gateway", Container: "gateway", To: "1536Mi", Time: at(5)},
	}
	rems = setRemediation(rems, v1alpha1.Remediation{Component: "nessie", Container: "nessie", To: "1152Mi", Time: at(40)})
	if len(rems) != 2 || rems[1].Component != "nessie" || rems[1].To != "1152Mi" {
		t.Fatalf("setRemediation did not replace nessie's entry: %+v", rems)
	}
	if last := lastRaise(rems, "nessie"); last == nil || last.To != "1152Mi" {
		t.Errorf("lastRaise(nessie) = %+v", last)
	}
	if lastRaise(rems, "postgres") != nil {
		t.Error("lastRaise of a component never raised")
	}
	p := &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: v1alpha1.OntoPlatformStatus{Remediations: rems}}
	if a, b := desiredID("revision 2", p), desiredID("revision 2", &v1alpha1.OntoPlatform{ObjectMeta: metav1.ObjectMeta{Generation: 3}}); a == b {
		t.Errorf("desiredID ignores the remediations: %q", a)
	}
}

// TestOOMActOnce: an OOM kill passes the pod predicate until a pass handled it; a
// later kill of the same container (another finishedAt) passes again.
func TestOOMActOnce(t *testing.T) {
	rs := NewReactions(DefaultNodeGrace, DefaultEvictedPodTTL)
	pred := rs.podFailing()
	healthy := platformPod("nessie-1-a", "nessie", ownedBy("ReplicaSet", "nessie-1"), "n")
	oom := func(at time.Time) *corev1.Pod {
		pod := healthy.DeepCopy()
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nessie", RestartCount: 1, Ready: true,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: metav1.NewTime(at)}}}}
		return pod
	}
	first := oom(reactNow)
	if !pred.Update(event.UpdateEvent{ObjectOld: healthy, ObjectNew: first}) {
		t.Fatal("an OOM kill does not pass")
	}
	cs := &first.Status.ContainerStatuses[0]
	if _, isNew := rs.mark(oomKey(first, cs.Name, oomKilled(cs)), reactNow); !isNew {
		t.Fatal("the first OOM kill's key is not new")
	}
	if pred.Update(event.UpdateEvent{ObjectOld: first, ObjectNew: first.DeepCopy()}) {
		t.Error("a handled OOM kill passes again")
	}
	if !pred.Update(event.UpdateEvent{ObjectOld: first, ObjectNew: oom(reactNow.Add(time.Minute))}) {
		t.Error("a second OOM kill of the same container does not pass")
	}
	other := oom(reactNow)
	other.UID = "another-pod"
	if !pred.Update(event.UpdateEvent{ObjectOld: healthy, ObjectNew: other}) {
		t.Error("the OOM kill of another pod at the same time does not pass")
	}
}

// TestRemediateMemory runs the remediation of a pass against a fake cache and API
// server: a raise recorded in the status with an Event, audit line and no second
// raise of the same kill; a kill at an old limit ignored; a raise within the cooldown
// and one the namespace's quota leaves no room for refused with RemediationBlocked.
func TestRemediateMemory(t *testing.T) {
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	p := ontotest.Example(t, "minimal.yaml", "ns")
	p.Name, p.Generation, p.ResourceVersion = "onto", 1, ""
	p.Spec.Remediation.Memory = v1alpha1.MemoryRemediationSpec{Enabled: true, Factor: "1.5"}
	oomPod := func(name, limit string, at time.Time) *corev1.Pod {
		pod := platformPod(name, "nessie", ownedBy("ReplicaSet", "nessie-1"), "n")
		pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nessie", RestartCount: 1, Ready: true,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: metav1.NewTime(at)}}}}
		return pod
	}
	setup := func(t *testing.T, objs ...runtime.Object) (*Reconciler, *events.FakeRecorder, *bytes.Buffer) {
		cl := fake.NewClientBuilder().WithScheme(s).WithObjects(p.DeepCopy()).WithStatusSubresource(&v1alpha1.OntoPlatform{}).Build()
		rec, audit := events.NewFakeRecorder(100), &bytes.Buffer{}
		r := &Reconciler{Client: cl, Clients: &kube.Clients{Kube: kubefake.NewClientset(objs...)}, Catalog: ontotest.Catalog(t),
			Recorder: rec, Audit: NewAuditLog(audit), Now: func() time.Time { return reactNow }, Reactions: NewReactions(DefaultNodeGrace, DefaultEvictedPodTTL)}
		return r, rec, audit
	}
	live := func(t *testing.T, r *Reconciler) *v1alpha1.OntoPlatform {
		var got v1alpha1.OntoPlatform
		if err := r.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			t.Fatal(err)
		}
		return &got
	}
	drain := func(rec *events.FakeRecorder) []string {
		var out []string
		for {
			select {
			case ev := <-rec.Events:
				out = append(out, ev)
			default:
				return out
			}
		}
	}

	t.Run("raise once", func(t *testing.T) {
		r, rec, audit := setup(t)
		cur := live(t, r)
		pods := []corev1.Pod{*oomPod("nessie-1-a", "1Gi", reactNow.Add(-time.Minute)), *oomPod("nessie-1-b", "512Mi", reactNow.Add(-time.Minute))}
		r.remediateMemory(context.Background(), cur, pods, reactNow)
		got := live(t, r).Status.Remediations
		if len(got) != 1 || got[0].Component != "nessie" || got[0].From != "1Gi" || got[0].To != "1536Mi" || got[0].Pod != "nessie-1-a" {
			t.Fatalf("status.remediations = %+v, want nessie 1Gi → 1536Mi by pod nessie-1-a", got)
		}
		if len(cur.Status.Remediations) != 1 {
			t.Error("the pass's platform does not carry the new remediation for its render")
		}
		evs := drain(rec)
		if len(evs) != 1 || !strings.Contains(evs[0], EventMemoryRaised) || !strings.Contains(evs[0], "1Gi → 1536Mi") {
			t.Errorf("events %q, want one MemoryRaised 1Gi → 1536Mi (the 512Mi pod was killed at an old limit)", evs)
		}
		if !strings.Contains(audit.String(), `"action":"raise-memory"`) {
			t.Errorf("no raise-memory audit line: %s", audit.String())
		}
		r.remediateMemory(context.Background(), live(t, r), pods, reactNow.Add(time.Minute))
		if evs := drain(rec); len(evs) != 0 {
			t.Errorf("the same kill answered twice: %q", evs)
		}
	})

	t.Run("cooldown", func(t *testing.T) {
		r, rec, _ := setup(t)
		cur := live(t, r)
		cur.Status.Remediations = []v1alpha1.Remediation{{Component: "nessie", Container: "nessie", Resource: "memory", From: "1Gi", To: "1536Mi", Time: metav1.NewTime(reactNow.Add(-10 * time.Minute))}}
		r.remediateMemory(context.Background(), cur, []corev1.Pod{*oomPod("nessie-2-a", "1536Mi", reactNow.Add(-time.Minute))}, reactNow)
		evs := drain(rec)
		if len(evs) != 1 || !strings.Contains(evs[0], EventRemediationBlocked) || !strings.Contains(evs[0], "cooldown") {
			t.Errorf("events %q, want one RemediationBlocked naming the cooldown", evs)
		}
	})

	t.Run("quota full", func(t *testing.T) {
		q := quota("tenant", "4Gi", "4Gi")
		q.Namespace = "ns"
		r, rec, _ := setup(t, &q)
		r.remediateMemory(context.Background(), live(t, r), []corev1.Pod{*oomPod("nessie-1-a", "1Gi", reactNow.Add(-time.Minute))}, reactNow)
		evs := drain(rec)
		if len(evs) != 1 || !strings.Contains(evs[0], EventRemediationBlocked) || !strings.Contains(evs[0], "ResourceQuota tenant") {
			t.Errorf("events %q, want one RemediationBlocked naming ResourceQuota tenant", evs)
		}
		if got := live(t, r).Status.Remediations; len(got) != 0 {
			t.Errorf("status.remediations = %+v, want none", got)
		}
	})
}
