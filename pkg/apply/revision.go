/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// Revision snapshots: what each writing run rendered from, kept in a Secret per
// revision so upgrade, rollback, scale, doctor and the reconciler can render exactly the
// objects of a revision again, --releases entries and spec.patches included, without the
// files of whoever ran it. They are labelled v1alpha1.LabelRevisionOf and LabelRevision,
// never with the inventory label (prune and uninstall never list them), and owned by the
// OntoPlatform, so they go with it. They are Secrets, not ConfigMaps, because a spec may
// hold what a platform team would not show to everyone who can read ConfigMaps (registry
// names, hosts, patch contents).
const (
	// RevisionSecretType is the type of a snapshot Secret.
	RevisionSecretType corev1.SecretType = "onto.paas/revision"
	// SnapshotKey is the data key of a snapshot Secret: gzipped JSON of a Snapshot.
	SnapshotKey = "snapshot.json.gz"
)

// maxSnapshotBytes bounds a decompressed snapshot. A Secret holds at most 1 MiB, so a
// larger result is not a snapshot but a decompression bomb.
const maxSnapshotBytes = 32 << 20

// Snapshot is what one revision rendered from: the spec as applied (spec.patches
// included) and the release catalog entry used, which may have come from a
// --releases directory the next run does not have. Render(Platform, Release) gives the
// revision's objects again.
type Snapshot struct {
	// APIVersion of Spec, so a later API version knows what to convert from.
	APIVersion string `json:"apiVersion"`
	// Spec of the OntoPlatform as applied, defaulted.
	Spec v1alpha1.OntoPlatformSpec `json:"spec"`
	// Release is the catalog entry of Spec.Version used to render.
	Release release.Release `json:"release"`
	// Digest is "sha256:" and the hex SHA-256 of the snapshot's JSON without it. It is
	// checked on decoding, so a snapshot edited in the cluster is refused rather than
	// rendered into something no run ever applied.
	Digest string `json:"digest"`
}

// Platform returns the OntoPlatform the snapshot renders: its spec under name and
// namespace, which the Secret's place and name give.
func (s *Snapshot) Platform(name, namespace string) *v1alpha1.OntoPlatform {
	p := &v1alpha1.OntoPlatform{Spec: *s.Spec.DeepCopy()}
	p.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	p.Name, p.Namespace = name, namespace
	return p
}

// digest computes the Digest of s, whatever s.Digest holds.
func (s *Snapshot) digest() (string, error) {
	rest := *s
	rest.Digest = ""
	data, err := json.Marshal(rest)
	if err != nil {
		return "", fmt.Errorf("encode snapshot: %w", err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// EncodeSnapshot returns s as gzipped JSON with its digest set (any Digest s holds is
// replaced). The output is the same for the same snapshot, byte for byte: the gzip
// header carries no time or name.
func EncodeSnapshot(s Snapshot) ([]byte, error) {
	var err error
	if s.Digest, err = s.digest(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	return buf.Bytes(), nil
}

// ErrSnapshotDigest is returned by DecodeSnapshot for a snapshot whose content does not
// match its digest.
var ErrSnapshotDigest = errors.New("snapshot does not match its digest: it was changed after it was recorded")

// DecodeSnapshot reads gzipped JSON written by EncodeSnapshot and checks its digest.
// Errors never quote the content, which may hold what a Secret protects.
func DecodeSnapshot(data []byte) (*Snapshot, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode snapshot: not gzip: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxSnapshotBytes+1))
	if err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	if len(raw) > maxSnapshotBytes {
		return nil, fmt.Errorf("decode snapshot: larger than %d bytes decompressed", maxSnapshotBytes)
	}
	// Unknown fields are refused, not dropped: a snapshot written by a newer
	// kubectl-onto may hold fields this one cannot render, and the digest, computed
	// over the fields this version knows, would not notice them missing.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s Snapshot
	if err := dec.Decode(&s); err != nil {
		// json's errors name offsets, fields and Go types, never values.
		return nil, fmt.Errorf("decode snapshot (written by a newer kubectl-onto?): %w", err)
	}
	if s.Digest == "" {
		return nil, errors.New("decode snapshot: no digest")
	}
	want, err := s.digest()
	if err != nil {
		return nil, err
	}
	if s.Digest != want {
		return nil, fmt.Errorf("decode snapshot: %w", ErrSnapshotDigest)
	}
	// After the digest check, which covers what was recorded: a snapshot from before
	// the catalog named each service's uses renders with its version's shipped ones.
	catalog, err := release.Default()
	if err != nil {
		return nil, err
	}
	s.Release = catalog.FillUses(s.Release)
	return &s, nil
}

// newSnapshot takes the spec from platform, the OntoPlatform as applied (plan.Desired's
// Platform), so the snapshot holds exactly what was stored.
func newSnapshot(platform *unstructured.Unstructured, rel release.Release) (Snapshot, error) {
	specMap, _, err := unstructured.NestedMap(platform.Object, "spec")
	if err != nil {
		return Snapshot{}, fmt.Errorf("spec of %s: %w", platform.GetName(), err)
	}
	var spec v1alpha1.OntoPlatformSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(specMap, &spec); err != nil {
		return Snapshot{}, fmt.Errorf("spec of %s: %w", platform.GetName(), err)
	}
	if rel.Version != spec.Version {
		return Snapshot{}, fmt.Errorf("release %q does not match spec.version %q", rel.Version, spec.Version)
	}
	return Snapshot{APIVersion: v1alpha1.GroupVersion.String(), Spec: spec, Release: rel}, nil
}

// RevisionSecretName is the name of the snapshot Secret of revision n of a platform.
func RevisionSecretName(platform string, n int64) string {
	return platform + "-rev-" + strconv.FormatInt(n, 10)
}

// recordRevision writes the snapshot of revision n of d's platform, rendered with rel,
// and deletes the snapshots of revisions the status history no longer lists. It
// returns the Secret's name for the history entry. The Secret is written with
// server-side apply, so recording a revision number again (a run whose status write
// failed after its snapshot was stored) replaces the earlier snapshot.
func (a *Applier) recordRevision(ctx context.Context, d *plan.Desired, rel *release.Release, n int64) (string, error) {
	platform, ns := d.Platform.GetName(), d.Platform.GetNamespace()
	name := RevisionSecretName(platform, n)
	if rel == nil {
		return "", fmt.Errorf("record revision %d of %s/%s: no release entry to record", n, ns, platform)
	}
	uid, err := a.writeSnapshot(ctx, d.Platform, *rel, name, map[string]string{
		v1alpha1.LabelRevisionOf: platform,
		v1alpha1.LabelRevision:   strconv.FormatInt(n, 10),
	})
	if err != nil {
		return "", fmt.Errorf("record revision %d of %s/%s: %w", n, ns, platform, err)
	}
	if err := a.pruneRevisions(ctx, ns, platform, uid, n); err != nil {
		return name, fmt.Errorf("record revision %d of %s/%s: %w", n, ns, platform, err)
	}
	return name, nil
}

// writeSnapshot stores platform's spec and rel in the snapshot Secret name of the
// platform's namespace, with labels, owned by the live platform (deleting the
// OntoPlatform deletes it), and returns the live platform's UID.
func (a *Applier) writeSnapshot(ctx context.Context, platform *unstructured.Unstructured, rel release.Release, name string, labels map[string]string) (types.UID, error) {
	snap, err := newSnapshot(platform, rel)
	if err != nil {
		return "", err
	}
	data, err := EncodeSnapshot(snap)
	if err != nil {
		return "", err
	}
	// The owner reference needs the live platform's UID, which the desired object
	// lacks.
	ri, err := a.Clients.Resource(platform)
	if err != nil {
		return "", err
	}
	live, err := ri.Get(ctx, platform.GetName(), metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get the platform: %w", err)
	}
	labels[v1alpha1.LabelManagedBy] = render.ManagedBy
	secret := corev1ac.Secret(name, platform.GetNamespace()).
		WithType(RevisionSecretType).
		WithLabels(labels).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(v1alpha1.GroupVersion.String()).
			WithKind(v1alpha1.Kind).
			WithName(platform.GetName()).
			WithUID(live.GetUID())).
		WithData(map[string][]byte{SnapshotKey: data})
	// Force: the Secret is this tool's alone; a conflict would only come from someone
	// editing a snapshot, which the digest would refuse anyway.
	if _, err := a.Clients.Kube.CoreV1().Secrets(platform.GetNamespace()).Apply(ctx, secret, metav1.ApplyOptions{FieldManager: a.fieldManager(), Force: true}); err != nil {
		return "", fmt.Errorf("write secret %s: %w", name, err)
	}
	return live.GetUID(), nil
}

// TargetSecretName names the snapshot Secret of the target of platform's upgrade or
// rollback in progress (status.upgrade.target).
func TargetSecretName(platform string) string {
	return platform + "-upgrade-target"
}

// LabelUpgradeTargetOf names the platform whose upgrade target a snapshot Secret
// holds. It is not LabelRevisionOf: pruneRevisions must not take it for a revision.
const LabelUpgradeTargetOf = "onto.paas/upgrade-target-of"

// RecordTarget stores what an upgrade or rollback moves to (platform's spec with its
// patches, and rel) before the run's first write, so a resume, an undo, doctor and the
// watch render the target again without the --releases directory or file it came
// from. It returns the Secret's name for status.upgrade.target.
func (a *Applier) RecordTarget(ctx context.Context, platform *unstructured.Unstructured, rel release.Release) (string, error) {
	name := TargetSecretName(platform.GetName())
	if _, err := a.writeSnapshot(ctx, platform, rel, name, map[string]string{LabelUpgradeTargetOf: platform.GetName()}); err != nil {
		return "", fmt.Errorf("record the target of %s/%s: %w", platform.GetNamespace(), platform.GetName(), err)
	}
	return name, nil
}

// LoadTarget reads the target snapshot RecordTarget stored for platform.
func (a *Applier) LoadTarget(ctx context.Context, namespace, platform string) (*Snapshot, error) {
	name := TargetSecretName(platform)
	s, err := a.Clients.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the target of %s/%s's upgrade: %w", namespace, platform, err)
	}
	if s.Type != RevisionSecretType || s.Labels[LabelUpgradeTargetOf] != platform {
		return nil, fmt.Errorf("the target of %s/%s's upgrade: Secret %s is not its snapshot (type %s, label %s=%q)",
			namespace, platform, name, s.Type, LabelUpgradeTargetOf, s.Labels[LabelUpgradeTargetOf])
	}
	snap, err := DecodeSnapshot(s.Data[SnapshotKey])
	if err != nil {
		return nil, fmt.Errorf("the target of %s/%s's upgrade: Secret %s: %w", namespace, platform, name, err)
	}
	return snap, nil
}

// DeleteTarget removes the target snapshot of platform once its upgrade or rollback
// ended (finished or undone); gone already is not an error.
func (a *Applier) DeleteTarget(ctx context.Context, namespace, platform string) error {
	err := a.Clients.Kube.CoreV1().Secrets(namespace).Delete(ctx, TargetSecretName(platform), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the target snapshot of %s/%s: %w", namespace, platform, err)
	}
	return nil
}

// pruneRevisions deletes the snapshot Secrets of platform other than revisions
// (newest-MaxHistory, newest]: a snapshot is kept exactly as long as the status history
// (MaxHistory revisions) can name it. Snapshots owned by another UID belong to an
// earlier OntoPlatform of the same name; the garbage collector would delete them, but
// their numbers would collide with this one's, so they go now.
func (a *Applier) pruneRevisions(ctx context.Context, ns, platform string, owner types.UID, newest int64) error {
	selector := labels.SelectorFromSet(labels.Set{v1alpha1.LabelRevisionOf: platform}).String()
	list, err := a.Clients.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list revision snapshots: %w", err)
	}
	var errs []error
	for _, s := range list.Items {
		if s.Type != RevisionSecretType {
			continue // someone else's Secret with our label: not ours to delete
		}
		n, err := strconv.ParseInt(s.Labels[v1alpha1.LabelRevision], 10, 64)
		ours := err == nil && ownedBy(s.OwnerReferences, owner)
		if ours && n > newest-int64(v1alpha1.MaxHistory) && n <= newest {
			continue
		}
		// The precondition keeps a Secret rewritten since the list (a concurrent run
		// recording the same number) from being deleted.
		pre := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion}}
		if err := a.Clients.Kube.CoreV1().Secrets(ns).Delete(ctx, s.Name, pre); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete revision snapshot %s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid && r.Kind == v1alpha1.Kind {
			return true
		}
	}
	return false
}

// LatestSnapshot is the newest Succeeded revision of history before `before` (0: any)
// that kept a snapshot, or 0: what upgrade, doctor and the watch render from.
func LatestSnapshot(history []v1alpha1.Revision, before int64) int64 {
	for i := len(history) - 1; i >= 0; i-- {
		if h := history[i]; h.Result == v1alpha1.RevisionSucceeded && h.Snapshot != "" && (before == 0 || h.Revision < before) {
			return h.Revision
		}
	}
	return 0
}

// LoadRevision reads the snapshot of revision n of the platform namespace/platform and
// checks it: a Secret of that name that is not a snapshot of this platform's revision
// n, or whose content does not match its digest, is an error.
func (a *Applier) LoadRevision(ctx context.Context, namespace, platform string, n int64) (*Snapshot, error) {
	name := RevisionSecretName(platform, n)
	s, err := a.Clients.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("revision %d of %s/%s: no snapshot (only the newest %d revisions keep one): %w", n, namespace, platform, v1alpha1.MaxHistory, err)
	}
	if err != nil {
		return nil, fmt.Errorf("revision %d of %s/%s: %w", n, namespace, platform, err)
	}
	if s.Type != RevisionSecretType || s.Labels[v1alpha1.LabelRevisionOf] != platform || s.Labels[v1alpha1.LabelRevision] != strconv.FormatInt(n, 10) {
		return nil, fmt.Errorf("revision %d of %s/%s: Secret %s is not its snapshot (type %s, labels %s=%q, %s=%q)",
			n, namespace, platform, name, s.Type, v1alpha1.LabelRevisionOf, s.Labels[v1alpha1.LabelRevisionOf], v1alpha1.LabelRevision, s.Labels[v1alpha1.LabelRevision])
	}
	snap, err := DecodeSnapshot(s.Data[SnapshotKey])
	if err != nil {
		return nil, fmt.Errorf("revision %d of %s/%s: Secret %s: %w", n, namespace, platform, name, err)
	}
	return snap, nil
}
