/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// overlay is one generated kustomization: a directory under the platform root with its
// kustomization.yaml and the extra files it lists (generated objects, config files).
type overlay struct {
	dir   string
	plane v1alpha1.Plane
	k     types.Kustomization
	files map[string][]byte
	// patches are the patches of the base's objects, one per object, which render
	// applies to what kustomize built (applyPatches).
	patches []*objPatch
}

func newOverlay(dir string, plane v1alpha1.Plane) *overlay {
	return &overlay{
		dir:   dir,
		plane: plane,
		k:     types.Kustomization{TypeMeta: types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind}},
		files: map[string][]byte{},
	}
}

// addObject writes obj as a file of the overlay and lists it as a resource.
func (o *overlay) addObject(name string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", name, err)
	}
	o.files[name] = data
	o.k.Resources = append(o.k.Resources, name)
	return nil
}

// patch returns the patch of the object of kind and name, as named in the base (before
// any rename by the overlay), creating it on first use: every change of one object
// goes into one patch.
func (o *overlay) patch(kind, name string) *objPatch {
	for _, p := range o.patches {
		if p.kind == kind && p.name == name {
			return p
		}
	}
	p := &objPatch{kind: kind, name: name, doc: map[string]any{}}
	o.patches = append(o.patches, p)
	return p
}

// applyPatches applies the overlay's patches to the objects kustomize built of it, in
// the order they were first asked for.
func (o *overlay) applyPatches(objs []*unstructured.Unstructured) error {
	for _, p := range o.patches {
		if len(p.doc) == 0 && p.rename == "" && p.renameContainer[0] == "" {
			continue
		}
		var target *unstructured.Unstructured
		for _, u := range objs {
			if u.GetKind() == p.kind && u.GetName() == p.name {
				target = u
				break
			}
		}
		if target == nil {
			return fmt.Errorf("patch %s %s: no such object", p.kind, p.name)
		}
		patched, err := p.apply(target.Object)
		if err != nil {
			return fmt.Errorf("patch %s %s: %w", p.kind, p.name, err)
		}
		target.Object = patched
		o.followGeneratedNames(target, objs)
		if p.rename == "" {
			continue
		}
		target.SetName(p.rename)
		if p.kind != "ServiceAccount" {
			continue
		}
		for _, u := range objs {
			pod := nestedMap(u.Object, "spec", "template", "spec")
			if pod != nil && pod["serviceAccountName"] == p.name {
				pod["serviceAccountName"] = p.rename
			}
		}
	}
	return nil
}

// followGeneratedNames points the envFrom of the pod of a patched workload that names
// a ConfigMap the overlay generates at the generated ConfigMap, whose name kustomize
// completed with a hash of its content; as kustomize does for the references in the
// bases, which the build has already resolved.
func (o *overlay) followGeneratedNames(u *unstructured.Unstructured, objs []*unstructured.Unstructured) {
	containers := nestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, gen := range o.k.ConfigMapGenerator {
		built := ""
		for _, c := range objs {
			if c.GetKind() == "ConfigMap" && strings.HasPrefix(c.GetName(), gen.Name+"-") && !strings.Contains(c.GetName()[len(gen.Name)+1:], "-") {
				built = c.GetName()
			}
		}
		for _, c := range containers {
			env, _ := c.(map[string]any)["envFrom"].([]any)
			for _, e := range env {
				if ref := nestedMap(e.(map[string]any), "configMapRef"); ref != nil && ref["name"] == gen.Name && built != "" {
					ref["name"] = built
				}
			}
		}
	}
}

// addConfig generates the ConfigMap name from literal KEY=value pairs, in key order so
// the content hash kustomize appends to the name is stable.
func (o *overlay) addConfig(name string, env map[string]string, files map[string]string) {
	args := types.ConfigMapArgs{GeneratorArgs: types.GeneratorArgs{Name: name}}
	for _, k := range sortedKeys(env) {
		args.LiteralSources = append(args.LiteralSources, k+"="+env[k])
	}
	for _, k := range sortedKeys(files) {
		o.files[k] = []byte(files[k])
		args.FileSources = append(args.FileSources, k)
	}
	o.k.ConfigMapGenerator = append(o.k.ConfigMapGenerator, args)
}

// setLabels gives every object of the overlay the recommended labels. The stable pair
// (name, instance) also goes into selectors; version and the others only into metadata
// and pod templates, because selectors are immutable and must survive an upgrade.
// With templateVersion set, the version label stays on the objects' metadata only: the
// caller patches templateVersion into the pod template itself (setTemplateVersion).
func (o *overlay) setLabels(selector, meta map[string]string, templateVersion string) {
	o.k.Labels = []types.Label{{Pairs: selector, IncludeSelectors: true}}
	if templateVersion == "" {
		if len(meta) > 0 {
			o.k.Labels = append(o.k.Labels, types.Label{Pairs: meta, IncludeTemplates: true})
		}
		return
	}
	templated, metadataOnly := map[string]string{}, map[string]string{}
	for k, v := range meta {
		if k == LabelVersion {
			metadataOnly[k] = v
		} else {
			templated[k] = v
		}
	}
	o.k.Labels = append(o.k.Labels, types.Label{Pairs: templated, IncludeTemplates: true})
	if len(metadataOnly) > 0 {
		o.k.Labels = append(o.k.Labels, types.Label{Pairs: metadataOnly})
	}
}

// imageVersion is the version an image reference names, usable as a label value: its
// tag, else the start of its digest (a reference pinned by digest alone), else
// "latest", the tag a reference without one means.
func imageVersion(ref string) string {
	_, tag, digest := splitImage(ref)
	switch {
	case tag != "":
		return labelValue(tag)
	case digest != "":
		// "sha256:<hex>": the algorithm's colon is not allowed in a label value, and
		// 12 hex digits tell images apart as docker's short ids do.
		_, hex, _ := strings.Cut(digest, ":")
		return labelValue(hex[:min(len(hex), 12)])
	default:
		return "latest"
	}
}

// labelValue makes s a valid label value: at most 63 characters of [A-Za-z0-9._-],
// beginning and ending with a letter or digit. Image tags allow the same characters
// and up to 128 of them, so only a long tag is cut.
func labelValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, s)
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "._-")
}

// setImage replaces the placeholder image of the base with ref.
func (o *overlay) setImage(placeholder, ref string) {
	name, tag, digest := splitImage(ref)
	o.k.Images = append(o.k.Images, types.Image{Name: placeholder, NewName: name, NewTag: tag, Digest: digest})
}

// write stores the overlay under dir of fsys.
func (o *overlay) write(fsys filesys.FileSystem, dir string) error {
	for _, name := range sortedKeys(o.files) {
		if err := fsys.WriteFile(path.Join(dir, name), o.files[name]); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return writeYAML(fsys, path.Join(dir, "kustomization.yaml"), o.k)
}

func writeYAML(fsys filesys.FileSystem, p string, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", p, err)
	}
	if err := fsys.WriteFile(p, data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// splitImage splits an image reference into name, tag and digest, as kustomize's images
// field wants them. A colon belongs to the tag only after the last slash, so a registry
// port (registry:5000/x) stays in the name.
func splitImage(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
