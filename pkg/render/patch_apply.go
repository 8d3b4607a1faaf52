/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// namedPatch is a patch with the name its errors carry: its field path for a patch of
// spec.patches ("spec.patches[2]"), its place among the one-off patches otherwise, so
// a user can tell which entry of which list to fix.
type namedPatch struct {
	name string
	Patch
}

// SpecPatches converts the patches stored in a platform's spec to render's form.
func SpecPatches(stored []v1alpha1.Patch) []Patch {
	out := make([]Patch, 0, len(stored))
	for _, sp := range stored {
		p := Patch{Patch: sp.Patch}
		if t := sp.Target; t != nil {
			p.Target = &PatchTarget{
				Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
				LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector,
			}
		}
		out = append(out, p)
	}
	return out
}

// allPatches lists the patches of one render in the order they apply: the platform's
// own (spec.patches), then the one-off ones, which may therefore override them.
func allPatches(stored []v1alpha1.Patch, oneOff []Patch) []namedPatch {
	out := make([]namedPatch, 0, len(stored)+len(oneOff))
	for i, p := range SpecPatches(stored) {
		out = append(out, namedPatch{name: fmt.Sprintf("spec.patches[%d]", i), Patch: p})
	}
	for i, p := range oneOff {
		out = append(out, namedPatch{name: fmt.Sprintf("user patch %d", i), Patch: p})
	}
	return out
}

// applyPatches builds every rendered object once more with the patches. An object
// keeps the plane it was rendered in; one a patch renames or adds is placed by its
// app.kubernetes.io/component label.
//
// A patch that matches no object is an error, not a silent no-op: kustomize fails an
// untargeted strategic-merge patch of a missing object but applies a targeted one to
// nothing, and a stored patch that quietly stopped applying (a renamed component, a
// typo in a selector) would go unnoticed for every later run. Targets are matched
// against the objects the spec renders, before any patch.
func applyPatches(k *krusty.Kustomizer, fsys filesys.FileSystem, objs []planeObject, patches []namedPatch) ([]planeObject, error) {
	dir := path.Join(fsRoot, "user-patches")
	var stream bytes.Buffer
	planeOf := make(map[objectKey]v1alpha1.Plane, len(objs))
	for _, po := range objs {
		data, err := yaml.Marshal(po.obj.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", po.obj.GetKind(), po.obj.GetName(), err)
		}
		stream.WriteString("---\n")
		stream.Write(data)
		planeOf[keyOf(po.obj)] = po.plane
	}
	if err := fsys.WriteFile(path.Join(dir, "objects.yaml"), stream.Bytes()); err != nil {
		return nil, fmt.Errorf("user patches: %w", err)
	}
	var rendered resmap.ResMap // parsed on the first explicit target only
	kps := make([]types.Patch, 0, len(patches))
	for _, np := range patches {
		if strings.TrimSpace(np.Patch.Patch) == "" {
			return nil, fmt.Errorf("%s is empty", np.name)
		}
		kp := types.Patch{Patch: np.Patch.Patch}
		t := np.Target
		if t == nil {
			var err error
			if t, err = targetOf(np.Patch.Patch); err != nil {
				return nil, fmt.Errorf("%s: %w", np.name, err)
			}
			if _, ok := planeOf[objectKey{group: t.Group, kind: t.Kind, name: t.name}]; !ok {
				return nil, fmt.Errorf("%s: the platform renders no %s %s", np.name, t.Kind, t.name)
			}
		}
		kp.Target = selectorOf(t)
		if np.Target != nil {
			if rendered == nil {
				var err error
				rf := resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory())
				if rendered, err = rf.NewResMapFromBytes(stream.Bytes()); err != nil {
					return nil, fmt.Errorf("user patches: %w", err)
				}
			}
			matched, err := rendered.Select(*kp.Target)
			if err != nil {
				return nil, fmt.Errorf("%s: target: %w", np.name, err)
			}
			if len(matched) == 0 {
				return nil, fmt.Errorf("%s: target %s matches no object the platform renders", np.name, describeTarget(np.Target))
			}
		}
		kps = append(kps, kp)
	}
	built, err := buildPatched(k, fsys, dir, kps)
	if err != nil {
		return nil, blamePatch(k, fsys, dir, patches, kps, err)
	}
	if err := rehashConfigMaps(objs, built); err != nil {
		return nil, fmt.Errorf("user patches: %w", err)
	}
	out := make([]planeObject, 0, len(built))
	for _, u := range built {
		pl, ok := planeOf[keyOf(u)]
		if !ok {
			pl = v1alpha1.Plane(u.GetLabels()[LabelComponent])
			if !slices.Contains(v1alpha1.Planes(), pl) {
				return nil, fmt.Errorf("user patches: %s %s: not rendered by the spec, and its label %s=%q names no plane", u.GetKind(), u.GetName(), LabelComponent, pl)
			}
		}
		out = append(out, planeObject{plane: pl, obj: u})
	}
	return out, nil
}

// buildPatched builds the rendered objects of dir with kps.
func buildPatched(k *krusty.Kustomizer, fsys filesys.FileSystem, dir string, kps []types.Patch) ([]*unstructured.Unstructured, error) {
	kz := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"objects.yaml"},
		Patches:   kps,
	}
	if err := writeYAML(fsys, path.Join(dir, "kustomization.yaml"), kz); err != nil {
		return nil, err
	}
	return build(k, fsys, dir)
}

// blamePatch names the patch that made the build fail. kustomize applies the patches
// of one kustomization in order and does not say which one failed, so this rebuilds
// with ever shorter prefixes (a bisection: a prefix fails once it holds the culprit).
// It runs only after a failure, so a good render pays nothing for it.
func blamePatch(k *krusty.Kustomizer, fsys filesys.FileSystem, dir string, patches []namedPatch, kps []types.Patch, buildErr error) error {
	if len(kps) == 1 {
		return fmt.Errorf("%s: %w", patches[0].name, buildErr)
	}
	lo, hi, culpritErr := 1, len(kps), buildErr
	for lo < hi {
		mid := (lo + hi) / 2
		if _, err := buildPatched(k, fsys, dir, kps[:mid]); err != nil {
			hi, culpritErr = mid, err
		} else {
			lo = mid + 1
		}
	}
	return fmt.Errorf("%s: %w", patches[lo-1].name, culpritErr)
}

// selectorOf turns a target into kustomize's selector.
func selectorOf(t *PatchTarget) *types.Selector {
	return &types.Selector{
		ResId: resid.ResId{
			Gvk:       resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind},
			Name:      t.Name,
			Namespace: t.Namespace,
		},
		LabelSelector:      t.LabelSelector,
		AnnotationSelector: t.AnnotationSelector,
	}
}

// describeTarget renders the fields a target sets, as the user wrote them.
func describeTarget(t *PatchTarget) string {
	var parts []string
	for _, f := range []struct{ key, value string }{
		{"group", t.Group}, {"version", t.Version}, {"kind", t.Kind}, {"name", t.Name},
		{"namespace", t.Namespace}, {"labelSelector", t.LabelSelector}, {"annotationSelector", t.AnnotationSelector},
	} {
		if f.value != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", f.key, f.value))
		}
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// targetOf selects the object a strategic-merge patch names. Kustomize matches an
// untargeted patch on its namespace too, and users rarely write the namespace (the spec
// decides it), so the patch gets an explicit target by group, version, kind and name.
func targetOf(patch string) (*PatchTarget, error) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(patch), &obj); err != nil {
		return nil, fmt.Errorf("a patch without a target must be a strategic-merge patch naming its object (a JSON 6902 patch needs a target): %w", err)
	}
	if obj.Kind == "" || obj.Metadata.Name == "" {
		return nil, errors.New("a strategic-merge patch without a target must set kind and metadata.name")
	}
	group, version := "", obj.APIVersion
	if i := strings.LastIndex(obj.APIVersion, "/"); i >= 0 {
		group, version = obj.APIVersion[:i], obj.APIVersion[i+1:]
	}
	return &PatchTarget{
		Group: group, Version: version, Kind: obj.Kind,
		Name: "^" + regexp.QuoteMeta(obj.Metadata.Name) + "$", Namespace: obj.Metadata.Namespace,
		name: obj.Metadata.Name,
	}, nil
}
