/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

// Resource arithmetic of the preflight checks: one pod's requests and limits, sums and
// maxima of resource lists, what a pod counts against a quota, and quantities written
// for a reader.

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// prePodResources are the requests and limits of one pod as the scheduler and quota
// count them: the containers' sum (restartable init containers, sidecars, included),
// or the largest init container with the sidecars started before it, whichever is
// more, per resource. A container's limit stands for a request it does not set, as
// the API server's defaulting makes it (extended resources such as GPUs are usually
// given as limits only).
func prePodResources(spec *corev1.PodSpec) (req, lim corev1.ResourceList) {
	containerReq := func(c *corev1.Container) corev1.ResourceList {
		out := c.Resources.Requests.DeepCopy()
		if out == nil {
			out = corev1.ResourceList{}
		}
		for r, q := range c.Resources.Limits {
			if _, ok := out[r]; !ok {
				out[r] = q.DeepCopy()
			}
		}
		return out
	}
	containerLim := func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits }
	sum := func(get func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
		total := corev1.ResourceList{}
		for i := range spec.Containers {
			preAdd(total, get(&spec.Containers[i]), 1)
		}
		sidecars, initMax := corev1.ResourceList{}, corev1.ResourceList{}
		for i := range spec.InitContainers {
			c := &spec.InitContainers[i]
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				preAdd(sidecars, get(c), 1)
				preMaxInto(initMax, sidecars)
				continue
			}
			step := sidecars.DeepCopy()
			preAdd(step, get(c), 1)
			preMaxInto(initMax, step)
		}
		preAdd(total, sidecars, 1)
		preMaxInto(total, initMax)
		if spec.Overhead != nil {
			preAdd(total, spec.Overhead, 1)
		}
		return total
	}
	return sum(containerReq), sum(containerLim)
}

// preAdd adds n times src to dst.
func preAdd(dst, src corev1.ResourceList, n int64) {
	for r, q := range src {
		v := q.DeepCopy()
		if n != 1 {
			v = preTimes(v, n)
		}
		cur := dst[r]
		cur.Add(v)
		dst[r] = cur
	}
}

func preTimes(q resource.Quantity, n int64) resource.Quantity {
	out := q.DeepCopy()
	if !out.Mul(n) {
		// Mul gives up on int64 overflow; the milli form is exact enough for counting.
		out = *resource.NewMilliQuantity(q.MilliValue()*n, q.Format)
	}
	return out
}

func preMaxInto(dst, src corev1.ResourceList) {
	for r, q := range src {
		if cur, ok := dst[r]; !ok || q.Cmp(cur) > 0 {
			dst[r] = q.DeepCopy()
		}
	}
}

// preQuotaUsage is what one pod with these requests and limits counts against a
// ResourceQuota, by quota resource name.
func preQuotaUsage(req, lim corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	for r, q := range req {
		switch r {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			out[r] = q.DeepCopy()
		}
		out["requests."+r] = q.DeepCopy()
	}
	for r, q := range lim {
		switch r {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			out["limits."+r] = q.DeepCopy()
		}
	}
	return out
}

func preAllContainers(spec *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range spec.InitContainers {
		out = append(out, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		out = append(out, &spec.Containers[i])
	}
	return out
}

func preContainerRequests(c *corev1.Container) corev1.ResourceList {
	out := c.Resources.Requests.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for r, q := range c.Resources.Limits {
		if _, ok := out[r]; !ok {
			out[r] = q
		}
	}
	return out
}

func preSortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for r := range l {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func preSortedKeys[V any](m map[corev1.ResourceName]V) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// preIsExtended is a resource outside kubernetes.io's own (GPUs and other devices).
func preIsExtended(r corev1.ResourceName) bool {
	s := string(r)
	return strings.Contains(s, "/") && !strings.Contains(s, "kubernetes.io/")
}

// preQty formats a quantity of resource r for a reader: cpu in cores, bytes in GiB or
// MiB, anything else (GPUs, pods) as counted.
func preQty(r corev1.ResourceName, q resource.Quantity) string {
	base := string(r)
	base = strings.TrimPrefix(strings.TrimPrefix(base, "requests."), "limits.")
	switch {
	case base == "cpu":
		s := strconv.FormatFloat(float64(q.MilliValue())/1000, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	case base == "memory" || base == "ephemeral-storage" || base == "storage" || strings.HasPrefix(base, "hugepages-"):
		b := float64(q.Value())
		const mi, gi = 1 << 20, 1 << 30
		switch {
		case b >= gi || b <= -gi:
			return strconv.FormatFloat(roundTo(b/gi, 2), 'f', -1, 64) + " GiB"
		case b >= mi || b <= -mi:
			return strconv.FormatFloat(roundTo(b/mi, 1), 'f', -1, 64) + " MiB"
		}
		return strconv.FormatFloat(b, 'f', -1, 64) + " B"
	}
	return q.String()
}

func roundTo(v float64, decimals int) float64 {
	p := 1.0
	for range decimals {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}
