/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package upgrade

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
)

// LabelMigration marks a migration Job with the version it migrates to, and
// AnnotationBackwardCompatible says whether the previous version reads its result.
const (
	LabelMigration               = "onto.paas/migration"
	AnnotationBackwardCompatible = "onto.paas/backward-compatible"
)

// defaultMigrationTimeout bounds a migration Job that sets none, in seconds.
const defaultMigrationTimeout = 600

// MigrationError says a component's migration Job failed; nothing of the component
// was changed.
type MigrationError struct {
	Job, Reason string
}

func (e *MigrationError) Error() string {
	return fmt.Sprintf("migration Job %s failed: %s; nothing of the component was changed", e.Job, e.Reason)
}

// migrationOf is component c's migration in the target release, when this run is an
// upgrade that moves c to a new version.
func (r *run) migrationOf(c string) *release.Migration {
	if r.u.Options.Action != "upgrade" || r.st.from.Spec.Version == r.target.Spec.Version {
		return nil
	}
	img, ok := r.target.Release.Components[c]
	if !ok {
		return nil
	}
	return img.Migration
}

// migrationJobName is the Job of component c's migration to version.
func migrationJobName(c, version string) string {
	return c + "-migrate-" + strings.NewReplacer(".", "-", "+", "-").Replace(version)
}

// migrate runs component c's migration Job m, once: a Job of that name that already
// completed (a resumed run) is not run again; one that failed is replaced. It waits
// until the Job completes or fails.
func (r *run) migrate(ctx context.Context, c string, m *release.Migration) error {
	u := r.u
	job, err := r.migrationJob(c, m)
	if err != nil {
		return err
	}
	jobs := u.Clients.Kube.BatchV1().Jobs(u.Namespace)
	live, err := jobs.Get(ctx, job.Name, metav1.GetOptions{})
	switch {
	case err == nil && jobDone(live) == "Complete":
		r.emit(c, "migration "+job.Name+" already completed")
		return nil
	case err == nil && jobDone(live) == "Failed":
		if err := jobs.Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); ignoreNotFound(err) != nil {
			return err
		}
		if err := r.waitJobGone(ctx, job.Name); err != nil {
			return err
		}
		fallthrough
	case apierrors.IsNotFound(err) || (err == nil && jobDone(live) == "Failed"):
		if _, err := jobs.Create(ctx, job, metav1.CreateOptions{FieldManager: "kubectl-onto"}); err != nil {
			return fmt.Errorf("create migration Job %s: %w", job.Name, err)
		}
	case err != nil:
		return fmt.Errorf("get migration Job %s: %w", job.Name, err)
	}
	compat := "backward compatible"
	if !m.BackwardCompatible {
		compat = "NOT backward compatible: a failure after it is not rolled back automatically"
	}
	r.emit(c, fmt.Sprintf("migration %s running (%s)", job.Name, compat))
	return r.waitJob(ctx, job.Name)
}

// migrationJob builds the Job of component c's migration from its target workload's
// pod: the same service account, configuration, security context and resources, so
// it reaches the same data and passes the namespace's Pod Security level.
func (r *run) migrationJob(c string, m *release.Migration) (*batchv1.Job, error) {
	ws := workloadsOf(r.to, c)
	if len(ws) == 0 {
		return nil, fmt.Errorf("component %s has a migration but no workload in %s", c, r.target.Spec.Version)
	}
	var tmpl corev1.PodTemplateSpec
	raw, _, _ := unstructured.NestedMap(ws[0].Object, "spec", "template")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &tmpl); err != nil {
		return nil, fmt.Errorf("read the pod template of %s: %w", ws[0].GetName(), err)
	}
	if len(tmpl.Spec.Containers) == 0 {
		return nil, fmt.Errorf("the pod template of %s has no container", ws[0].GetName())
	}
	ctr := tmpl.Spec.Containers[0]
	ctr.Name = "migrate"
	if m.Image != "" {
		ctr.Image = m.Image
	}
	ctr.Command, ctr.Args = m.Command, m.Args
	ctr.Ports, ctr.LivenessProbe, ctr.ReadinessProbe, ctr.StartupProbe, ctr.Lifecycle = nil, nil, nil, nil, nil
	spec := tmpl.Spec
	spec.Containers = []corev1.Container{ctr}
	spec.InitContainers = nil
	spec.RestartPolicy = corev1.RestartPolicyNever
	timeout := m.TimeoutSeconds
	if timeout <= 0 {
		timeout = defaultMigrationTimeout
	}
	name := migrationJobName(c, r.target.Spec.Version)
	labels := map[string]string{v1alpha1.LabelName: c, v1alpha1.LabelInstance: r.u.Name, LabelMigration: r.target.Spec.Version}
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.u.Namespace, Labels: labels, OwnerReferences: r.ownerRefs(),
			Annotations: map[string]string{AnnotationBackwardCompatible: strconv.FormatBool(m.BackwardCompatible)}},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(int32(0)),
			ActiveDeadlineSeconds: &timeout,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       spec,
			},
		},
	}
	return job, nil
}

// ownerRefs makes the platform own a migration Job, so it goes with the platform.
func (r *run) ownerRefs() []metav1.OwnerReference {
	p := r.st.live
	return []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersionKind.GroupVersion().String(), Kind: v1alpha1.GroupVersionKind.Kind, Name: p.Name, UID: p.UID}}
}

// jobDone is "Complete", "Failed" or "" for a Job still running.
func jobDone(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			return string(c.Type)
		}
	}
	return ""
}

// waitJob watches Job name until it completes (nil) or fails (*MigrationError).
func (r *run) waitJob(ctx context.Context, name string) error {
	jobs := r.u.Clients.Kube.BatchV1().Jobs(r.u.Namespace)
	field := "metadata.name=" + name
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = field
			return jobs.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = field
			return jobs.Watch(ctx, o)
		},
	}
	var failure error
	_, err := watchtools.UntilWithSync(ctx, lw, &batchv1.Job{}, nil, func(ev watch.Event) (bool, error) {
		j, ok := ev.Object.(*batchv1.Job)
		if !ok {
			return false, nil
		}
		switch jobDone(j) {
		case "Complete":
			return true, nil
		case "Failed":
			reason := "failed"
			for _, c := range j.Status.Conditions {
				if c.Type == batchv1.JobFailed {
					reason = strings.TrimSpace(c.Reason + ": " + c.Message)
				}
			}
			failure = &MigrationError{Job: name, Reason: reason}
			return true, nil
		}
		return false, nil
	})
	if failure != nil {
		return failure
	}
	if err != nil {
		return fmt.Errorf("wait for migration Job %s: %w", name, err)
	}
	return nil
}

// waitJobGone waits until Job name is deleted.
func (r *run) waitJobGone(ctx context.Context, name string) error {
	jobs := r.u.Clients.Kube.BatchV1().Jobs(r.u.Namespace)
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := jobs.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
