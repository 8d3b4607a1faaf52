package testcluster_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

// TestNewNodeWithAllocatable: a node made with an extended resource of the test's
// own keeps it in capacity and allocatable once kwok has made it Ready.
func TestNewNodeWithAllocatable(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t)
	gpu := corev1.ResourceName("example.com/" + testcluster.UniqueName(t, "test-gpu"))
	node := c.NewNode(t, nil, []corev1.Taint{{Key: string(gpu), Value: "present", Effect: corev1.TaintEffectNoSchedule}},
		testcluster.WithAllocatable(corev1.ResourceList{gpu: resource.MustParse("4")}))
	for name, list := range map[string]corev1.ResourceList{"capacity": node.Status.Capacity, "allocatable": node.Status.Allocatable} {
		if q := list[gpu]; q.Value() != 4 {
			t.Errorf("%s of %s: %s %s, want 4", name, node.Name, gpu, q.String())
		}
		if q := list[corev1.ResourceCPU]; q.Value() != 16 {
			t.Errorf("%s of %s: cpu %s, want 16", name, node.Name, q.String())
		}
	}
}
