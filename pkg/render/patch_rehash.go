/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/hasher"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// rehashConfigMaps keeps "a config change rolls the pods" true for user patches: a
// generated ConfigMap (name <name>-<hash>) whose data a patch changed gets the hash of
// its new content, as kustomize's generator would give it, and every pod template that
// refers to it follows the new name. before are the objects as rendered, after the
// same objects patched; after is changed in place.
func rehashConfigMaps(before []planeObject, after []*unstructured.Unstructured) error {
	original := map[string]*unstructured.Unstructured{}
	for _, po := range before {
		if po.obj.GetKind() == "ConfigMap" && po.obj.GroupVersionKind().Group == "" {
			original[po.obj.GetName()] = po.obj
		}
	}
	renamed := map[string]string{}
	for _, u := range after {
		orig, ok := original[u.GetName()]
		if !ok || u.GetKind() != "ConfigMap" || sameData(orig, u) {
			continue
		}
		i := strings.LastIndex(u.GetName(), "-")
		if i < 0 {
			continue
		}
		data, err := u.MarshalJSON()
		if err != nil {
			return err
		}
		node, err := kyaml.Parse(string(data))
		if err != nil {
			return fmt.Errorf("ConfigMap %s: %w", u.GetName(), err)
		}
		h, err := (&hasher.Hasher{}).Hash(node)
		if err != nil {
			return fmt.Errorf("hash ConfigMap %s: %w", u.GetName(), err)
		}
		name := u.GetName()[:i] + "-" + h
		renamed[u.GetName()] = name
		u.SetName(name)
	}
	if len(renamed) == 0 {
		return nil
	}
	for _, u := range after {
		if tpl, found, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec"); found {
			renameConfigMapRefs(tpl, renamed)
			if err := unstructured.SetNestedMap(u.Object, tpl, "spec", "template", "spec"); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameData(a, b *unstructured.Unstructured) bool {
	return reflect.DeepEqual(a.Object["data"], b.Object["data"]) && reflect.DeepEqual(a.Object["binaryData"], b.Object["binaryData"])
}

// renameConfigMapRefs rewrites ConfigMap names in a pod spec: envFrom, env valueFrom,
// and volumes, of every container and init container.
func renameConfigMapRefs(pod map[string]any, renamed map[string]string) {
	rename := func(m map[string]any, path ...string) {
		if name, ok, _ := unstructured.NestedString(m, path...); ok && renamed[name] != "" {
			_ = unstructured.SetNestedField(m, renamed[name], path...)
		}
	}
	for _, list := range []string{"containers", "initContainers"} {
		containers, _ := pod[list].([]any)
		for _, c := range containers {
			cm, _ := c.(map[string]any)
			for _, e := range asMaps(cm["envFrom"]) {
				rename(e, "configMapRef", "name")
			}
			for _, e := range asMaps(cm["env"]) {
				rename(e, "valueFrom", "configMapKeyRef", "name")
			}
		}
	}
	for _, v := range asMaps(pod["volumes"]) {
		rename(v, "configMap", "name")
		for _, src := range asMaps(mapOf(v["projected"])["sources"]) {
			rename(src, "configMap", "name")
		}
	}
}

func asMaps(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
