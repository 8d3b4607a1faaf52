package testcluster_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestChaosImage: after ChaosImage, a pod of that image shows the mode while a pod
// of another image beside it stays Running and Ready with no restart.
func TestChaosImage(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	tests := []struct {
		mode testcluster.ChaosMode
		want func(p *corev1.Pod) bool
	}{
		{mode: testcluster.ChaosNeverReady, want: neverReady},
		{mode: testcluster.ChaosCrashLoop, want: func(p *corev1.Pod) bool {
			s := p.Status.ContainerStatuses
			return len(s) == 1 && s[0].RestartCount >= 1 && s[0].State.Waiting != nil &&
				s[0].State.Waiting.Reason == "CrashLoopBackOff" && !testcluster.PodReady(p)
		}},
		{mode: testcluster.ChaosOOMKilled, want: func(p *corev1.Pod) bool {
			s := p.Status.ContainerStatuses
			return len(s) == 1 && s[0].RestartCount == 1 && s[0].LastTerminationState.Terminated != nil &&
				s[0].LastTerminationState.Terminated.Reason == "OOMKilled" && s[0].State.Running != nil && testcluster.PodReady(p)
		}},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			bad := "registry.example/api:" + testcluster.UniqueName(t, "bad")
			c.ChaosImage(t, ns, bad, tc.mode)

			badPod := imagePod(t, c, ns, bad)
			goodPod := imagePod(t, c, ns, "registry.example/api:1.0")
			if _, err := testcluster.WaitFor(ctx, c, badPod, time.Minute, func(p *corev1.Pod) (bool, error) {
				return tc.want(p), nil
			}); err != nil {
				t.Fatalf("pod of %s does not show %s: %v; status %+v", bad, tc.mode, err, badPod.Status)
			}
			// The bad pod has shown its fault; the good one, started with it, had as
			// long to get the Stage by mistake.
			if _, err := testcluster.WaitFor(ctx, c, goodPod, time.Minute, func(p *corev1.Pod) (bool, error) {
				return testcluster.PodReady(p), nil
			}); err != nil {
				t.Fatalf("pod of another image is not Ready: %v", err)
			}
			if s := goodPod.Status.ContainerStatuses; len(s) != 1 || s[0].RestartCount != 0 || s[0].LastTerminationState.Terminated != nil {
				t.Fatalf("pod of another image got the %s Stage: %+v", tc.mode, goodPod.Status.ContainerStatuses)
			}
		})
	}
}

// imagePod creates a pod of one container running image.
func imagePod(t *testing.T, c *testcluster.Cluster, ns, image string) *corev1.Pod {
	t.Helper()
	grace := int64(0)
	p := &corev1.Pod{}
	p.Namespace, p.Name = ns, testcluster.UniqueName(t, "p")
	p.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}, TerminationGracePeriodSeconds: &grace}
	if err := c.Client.Create(t.Context(), p); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return p
}
