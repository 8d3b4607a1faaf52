package testcluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestChaosImage: after ChaosImage, a pod of that image shows the mode while a pod
// of another image beside it, and a pod of the same image in another namespace,
// stay Running and Ready with no restart.
func TestChaosImage(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ns := c.Namespace(t)
	otherNS := c.Namespace(t)
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
		{mode: testcluster.ChaosImagePull, want: imagePullBackOff},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			bad := "registry.example/api:" + testcluster.UniqueName(t, "bad")
			c.ChaosImage(t, ns, bad, tc.mode)

			badPod := imagePod(t, c, ns, bad)
			good := map[string]*corev1.Pod{
				"of another image":                   imagePod(t, c, ns, "registry.example/api:1.0"),
				"of that image in another namespace": imagePod(t, c, otherNS, bad),
			}
			if _, err := testcluster.WaitFor(ctx, c, badPod, time.Minute, func(p *corev1.Pod) (bool, error) {
				return tc.want(p), nil
			}); err != nil {
				t.Fatalf("pod of %s does not show %s: %v; status %+v", bad, tc.mode, err, badPod.Status)
			}
			// The bad pod has shown its fault; the good ones, started with it, had as
			// long to get the Stage by mistake.
			for what, p := range good {
				if _, err := testcluster.WaitFor(ctx, c, p, time.Minute, func(p *corev1.Pod) (bool, error) {
					return testcluster.PodReady(p), nil
				}); err != nil {
					t.Fatalf("pod %s is not Ready: %v", what, err)
				}
				if s := p.Status.ContainerStatuses; len(s) != 1 || s[0].RestartCount != 0 || s[0].LastTerminationState.Terminated != nil {
					t.Fatalf("pod %s got the %s Stage: %+v", what, tc.mode, p.Status.ContainerStatuses)
				}
			}
		})
	}
}

// TestImagePullChaos: a pod created with the imagepull label stays Pending and not
// Ready, its container waiting in ErrImagePull and then ImagePullBackOff, and
// stays so; once the label is removed the pull succeeds: Running and Ready.
func TestImagePullChaos(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	name := testcluster.UniqueName(t, "p")
	p := chaosPod(t, c, ns, name, map[string]string{testcluster.ChaosLabel: string(testcluster.ChaosImagePull)})
	start := time.Now()
	var errImagePull time.Duration // when ErrImagePull was seen; polling may miss its second
	if _, err := testcluster.WaitFor(ctx, c, p, 30*time.Second, func(p *corev1.Pod) (bool, error) {
		// Until kwok handles the pod it is Pending without a Ready condition, so
		// Running or Ready at any point means the fast pod-ready stage won.
		if p.Status.Phase != corev1.PodPending || testcluster.PodReady(p) {
			return false, fmt.Errorf("pod went %s, Ready %t", p.Status.Phase, testcluster.PodReady(p))
		}
		if s := p.Status.ContainerStatuses; errImagePull == 0 && len(s) == 1 && s[0].State.Waiting != nil && s[0].State.Waiting.Reason == "ErrImagePull" {
			errImagePull = time.Since(start)
		}
		return imagePullBackOff(p), nil
	}); err != nil {
		t.Fatalf("pod does not show ImagePullBackOff: %v; status %+v", err, p.Status)
	}
	t.Logf("ErrImagePull seen after %s, ImagePullBackOff after %s", errImagePull.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if msg, want := p.Status.ContainerStatuses[0].State.Waiting.Message, `Back-off pulling image "registry.example/app:1.0"`; msg != want {
		t.Errorf("waiting message %q, want %q", msg, want)
	}
	if got := podCondition(p, corev1.PodScheduled); got != corev1.ConditionTrue {
		t.Errorf("PodScheduled is %q, want True", got)
	}
	if got := podCondition(p, corev1.ContainersReady); got != corev1.ConditionFalse {
		t.Errorf("ContainersReady is %q, want False", got)
	}

	// A kubelet would retry the pull; the Stage keeps the pod as it is.
	if _, err := testcluster.StaysFor(ctx, c, p, 3*time.Second, func(p *corev1.Pod) (bool, error) {
		return imagePullBackOff(p), nil
	}); err != nil {
		t.Fatalf("pod left ImagePullBackOff: %v; status %+v", err, p.Status)
	}

	if err := c.SetPodChaos(ctx, ns, name, testcluster.ChaosNone); err != nil {
		t.Fatal(err)
	}
	if _, err := testcluster.WaitFor(ctx, c, p, 30*time.Second, func(p *corev1.Pod) (bool, error) {
		return p.Status.Phase == corev1.PodRunning && testcluster.PodReady(p) && p.Status.PodIP != "", nil
	}); err != nil {
		t.Fatalf("pod does not run once the label is gone: %v; status %+v", err, p.Status)
	}
}

// imagePullBackOff: the pod's one container waits in ImagePullBackOff for its
// image, and the pod is Pending and not Ready, as a kubelet leaves it.
func imagePullBackOff(p *corev1.Pod) bool {
	s := p.Status.ContainerStatuses
	return p.Status.Phase == corev1.PodPending && len(s) == 1 && !s[0].Ready && s[0].State.Waiting != nil &&
		s[0].State.Waiting.Reason == "ImagePullBackOff" && strings.Contains(s[0].State.Waiting.Message, s[0].Image) &&
		!testcluster.PodReady(p)
}

// podCondition is the status of p's condition of type cond, "" without one.
func podCondition(p *corev1.Pod, cond corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == cond {
			return c.Status
		}
	}
	return ""
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
