/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// minioSetup names the Job (and its ServiceAccount and ConfigMap) that gives the
// platform services their own MinIO user.
const minioSetup = "minio-setup"

// minioServicesPolicy is what the services' MinIO user may do: every S3 action on the
// buckets of the platform's own MinIO, and no admin action (users, policies, config
// stay with the root credentials). A release that names the services' buckets can
// narrow the Resource.
const minioServicesPolicy = `{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": ["s3:*"],
      "Resource": ["arn:aws:s3:::*"]
    }
  ]
}
`

// minioSetupOverlay renders the Job that creates the services' MinIO user and attaches
// its policy, in the infrastructure plane after MinIO. It runs MinIO's image (which
// ships mc) under the same pull policy, secrets and placement as MinIO.
func (b *builder) minioSetupOverlay(plane v1alpha1.Plane, imageOverride string) (*overlay, error) {
	o := newOverlay(minioSetup, plane)
	o.k.Resources = []string{"../../base/" + minioSetup}
	image, err := b.rel.Image(v1alpha1.ComponentMinio, b.spec.Global.ImageRegistry, imageOverride)
	if err != nil {
		return nil, err
	}
	// As MinIO's own pods: the template carries the image's version, not the
	// platform's, so a platform release that keeps MinIO's image keeps the Job's name
	// and does not run it again.
	version := imageVersion(image)
	selector, meta := b.labels(minioSetup, plane)
	o.setLabels(selector, meta, version)
	o.setImage(v1alpha1.ComponentMinio, image)
	o.addConfig(minioSetup+"-config", nil, map[string]string{"policy.json": minioServicesPolicy})
	// A few mc calls: small and fixed, whatever MinIO's own size.
	// Ephemeral storage covers the 16Mi /tmp (mc's config) and the logs.
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi"), corev1.ResourceEphemeralStorage: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("128Mi"), corev1.ResourceEphemeralStorage: resource.MustParse("64Mi")},
	}
	// What every pod takes from the spec, but what only a long-running workload has: a
	// Job has no minReadySeconds, and no Service to drain before it stops.
	job := o.patch("Job", minioSetup)
	b.podPatch(job, minioSetup, &res, false, false)
	setTemplateVersion(job, version)
	b.minioSetupTLSPatch(job)
	b.serviceAccountPatch(o, minioSetup, "")
	return o, nil
}

// nameJobsByContent appends to the name of every rendered Job a hash of its spec,
// after every patch. A Job's pod template is immutable: applying a changed one under
// the old name would fail, so a change makes a new Job, which apply creates and runs,
// and prune deletes the old one. An unchanged Job keeps its name and is not run again.
func nameJobsByContent(objs []planeObject) error {
	for _, po := range objs {
		u := po.obj
		if u.GetKind() != "Job" || u.GroupVersionKind().Group != "batch" {
			continue
		}
		data, err := json.Marshal(u.Object["spec"])
		if err != nil {
			return fmt.Errorf("hash Job %s: %w", u.GetName(), err)
		}
		sum := sha256.Sum256(data)
		u.SetName(u.GetName() + "-" + hex.EncodeToString(sum[:5]))
	}
	return nil
}
