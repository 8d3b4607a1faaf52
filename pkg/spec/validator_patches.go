/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// checkPatches rejects, offline and at their field, the spec.patches kustomize would
// reject when rendering: a patch that is neither YAML nor JSON, JSON 6902 operations
// without a target or malformed, a strategic-merge patch that does not name its
// object. Whether a patch matches a rendered object needs rendering, so pkg/render
// checks that, naming the patch by the same field path.
//
// Values are never echoed: a patch may carry configuration a user would not want in a
// CI log, and a long document would drown the message.
func checkPatches(patches []v1alpha1.Patch) field.ErrorList {
	var errs field.ErrorList
	for i, p := range patches {
		errs = append(errs, checkPatch(field.NewPath("spec", "patches").Index(i), p)...)
	}
	return errs
}

// jsonPatchMembers returns the members an RFC 6902 operation requires besides op and
// path, and whether op is one.
func jsonPatchMembers(op string) ([]string, bool) {
	switch op {
	case "add", "replace", "test":
		return []string{"value"}, true
	case "move", "copy":
		return []string{"from"}, true
	case "remove":
		return nil, true
	}
	return nil, false
}

func checkPatch(path *field.Path, p v1alpha1.Patch) field.ErrorList {
	patchPath := path.Child("patch")
	docs, err := patchDocuments(p.Patch)
	if err != nil {
		return field.ErrorList{field.Invalid(patchPath, field.OmitValueType{}, "not valid YAML or JSON: "+err.Error())}
	}
	if len(docs) == 0 {
		return field.ErrorList{field.Required(patchPath, "the patch is empty")}
	}
	switch first := docs[0].(type) {
	case []any:
		if len(docs) > 1 {
			return field.ErrorList{field.Invalid(patchPath, field.OmitValueType{}, "JSON 6902 operations must be one list, in one document")}
		}
		var errs field.ErrorList
		if p.Target == nil {
			errs = append(errs, field.Required(path.Child("target"), "JSON 6902 operations need a target to select the objects they change"))
		}
		return append(errs, checkJSONPatch(patchPath, first)...)
	case map[string]any:
		if len(docs) > 1 {
			return field.ErrorList{field.Invalid(patchPath, field.OmitValueType{}, fmt.Sprintf("holds %d strategic-merge documents; write one entry per object", len(docs)))}
		}
		if p.Target != nil {
			return nil // the target says what to patch; the document need not name it
		}
		kind, _ := first["kind"].(string)
		meta, _ := first["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if kind == "" || name == "" {
			return field.ErrorList{field.Invalid(patchPath, field.OmitValueType{}, "a strategic-merge patch without a target must name its object: apiVersion, kind and metadata.name")}
		}
		return nil
	default:
		return field.ErrorList{field.Invalid(patchPath, field.OmitValueType{}, "must be a strategic-merge patch (an object) or JSON 6902 operations (a list)")}
	}
}

// checkJSONPatch checks the shape of each operation; whether its path exists in the
// targets is for the render to find out.
func checkJSONPatch(path *field.Path, ops []any) field.ErrorList {
	if len(ops) == 0 {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "the list of JSON 6902 operations is empty")}
	}
	var errs field.ErrorList
	for j, raw := range ops {
		op, ok := raw.(map[string]any)
		if !ok {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("operation %d is not an object", j)))
			continue
		}
		name, _ := op["op"].(string)
		required, known := jsonPatchMembers(name)
		if !known {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("operation %d: op %q is not one of add, remove, replace, move, copy, test", j, name)))
			continue
		}
		// "" is a valid pointer (the whole object); anything else starts with "/".
		if p, isString := op["path"].(string); !isString || (p != "" && !strings.HasPrefix(p, "/")) {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("operation %d (%s): path must be a JSON pointer such as /spec/replicas", j, name)))
		}
		for _, member := range required {
			if _, ok := op[member]; !ok {
				errs = append(errs, field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("operation %d (%s): %s is required", j, name, member)))
			}
		}
	}
	return errs
}

// patchDocuments decodes every non-empty document of a patch, YAML or JSON, as
// kubectl converts YAML (sigs.k8s.io/yaml), so scalars mean what they mean to kustomize.
func patchDocuments(patch string) ([]any, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(patch)))
	var docs []any
	for i := 1; ; i++ {
		data, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var doc any
		if err := sigsyaml.Unmarshal(data, &doc); err != nil {
			// The parser's "line N" counts in the patch, not in the file: say so.
			msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
			msg = yamlLine.ReplaceAllString(strings.TrimPrefix(msg, "yaml: "), "$0 of the patch")
			if i > 1 {
				msg = fmt.Sprintf("document %d: %s", i, msg)
			}
			return nil, errors.New(msg)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// CheckPatches is the offline check of spec.patches for patches kept outside a
// platform file, such as a fleet file's per-cluster patches, with path naming them
// there ("waves[0].clusters[1].patches").
func CheckPatches(path *field.Path, patches []v1alpha1.Patch) field.ErrorList {
	var errs field.ErrorList
	for i, p := range patches {
		errs = append(errs, checkPatch(path.Index(i), p)...)
	}
	return errs
}
