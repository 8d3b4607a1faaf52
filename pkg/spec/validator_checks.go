/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// collector gathers the issues of one document, placing each at its line.
type collector struct {
	lines  lineIndex
	doc    int
	issues []Issue
	// incomplete is set when CEL rules were skipped because of type errors.
	incomplete bool
}

func (c *collector) add(errs ...*field.Error) {
	for _, e := range errs {
		c.addAt(e, c.lines.line(e.Field))
	}
}

func (c *collector) addAt(e *field.Error, line int) {
	c.issues = append(c.issues, newIssue(e, line, c.doc))
}

// yamlLine finds "line N" in a YAML parser's message, to place syntax errors.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// loadDocument runs one document through the API server's steps: strict decoding,
// pruning of unknown fields, defaulting, validation; then the project's own checks.
// It returns the typed object only when the document has no issue.
func (v *Validator) loadDocument(d document, index int) (*v1alpha1.OntoPlatform, *collector) {
	offset := d.firstLine - 1
	c := &collector{doc: index, lines: lineIndex{offset: offset}}
	var root yaml.Node
	if err := yaml.Unmarshal(d.data, &root); err != nil {
		c.addAt(syntaxError(err, d))
		return nil, c
	}
	c.lines.root = &root
	duplicateKeys(&root, nil, offset, c.addAt)

	// sigs.k8s.io/yaml is what kubectl converts YAML with, so scalars such as `yes` or
	// 0755 mean here what they mean to `kubectl apply`.
	js, err := sigsyaml.YAMLToJSON(d.data)
	if err != nil {
		c.addAt(syntaxError(err, d))
		return nil, c
	}
	var decoded any
	if err := utiljson.Unmarshal(js, &decoded); err != nil {
		c.add(field.Invalid(nil, field.OmitValueType{}, "invalid document: "+err.Error()))
		return nil, c
	}
	if decoded == nil {
		return nil, c // a document of only "null" or "~" is as empty as a blank one
	}
	obj, ok := decoded.(map[string]any)
	if !ok {
		c.add(field.Invalid(nil, field.OmitValueType{}, fmt.Sprintf("document%s is %s, not an object", docLabel(index), jsonTypeName(decoded))))
		return nil, c
	}
	if !v.checkKind(obj, c) {
		return nil, c
	}
	memoKey := v.memoKey(d.data)
	if p := v.recall(memoKey); p != nil {
		return p, c
	}
	if err := v.loadSchema(); err != nil {
		c.add(field.InternalError(nil, err))
		return nil, c
	}
	// The API server prunes unknown fields while decoding and, with field validation
	// Strict (kubectl's default), rejects the request naming each of them.
	if _, _, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true}); err != nil {
		c.add(field.Invalid(field.NewPath("metadata"), field.OmitValueType{}, err.Error()))
		return nil, c
	} else {
		for _, path := range unknown {
			c.add(v.unknownField(path))
		}
	}
	for _, path := range structuralpruning.PruneWithOptions(obj, v.schema.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		c.add(v.unknownField(path))
	}
	// CEL takes a context only to cancel a long evaluation; offline validation is
	// bounded by the per-call cost limit, so it needs no caller context.
	p := v.check(context.Background(), obj, c)
	if len(c.issues) > 0 {
		return nil, c
	}
	v.remember(memoKey, p)
	return p, c
}

// checkKind reports a document that is not an OntoPlatform. A document of another
// kind stops there (its schema is not ours); the right kind with a wrong version is
// validated further so every problem shows at once.
func (v *Validator) checkKind(obj map[string]any, c *collector) bool {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if kind != v1alpha1.Kind {
		if kind == "" {
			c.add(field.Required(field.NewPath("kind"), fmt.Sprintf("document%s has no kind; want %s", docLabel(c.doc), v1alpha1.Kind)))
		} else {
			c.add(field.Invalid(field.NewPath("kind"), kind, fmt.Sprintf("document%s is a %s (%s), not an %s", docLabel(c.doc), kind, apiVersion, v1alpha1.Kind)))
		}
		return false
	}
	if apiVersion != v1alpha1.GroupVersion.String() {
		c.add(field.NotSupported(field.NewPath("apiVersion"), apiVersion, []string{v1alpha1.GroupVersion.String()}))
	}
	return true
}

// check defaults and validates a decoded, pruned object in the API server's order and
// converts it to the typed object. Issues go to c; the object is nil when there are any.
func (v *Validator) check(ctx context.Context, obj map[string]any, c *collector) *v1alpha1.OntoPlatform {
	// Status has its own subresource: the API server drops it on create and keeps the
	// stored one on update, so a file's status is never stored or validated.
	delete(obj, "status")
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, v.schema.structural)
	structuraldefaulting.Default(obj, v.schema.structural)

	var errs field.ErrorList
	errs = append(errs, apiextensionsvalidation.ValidateCustomResource(nil, obj, v.schema.openAPI)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, v.schema.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.schema.structural, obj)...)
	for _, e := range errs {
		e.Detail = friendlyDetail(e)
		typeErrorDetail(e, obj)
		if e.Type == field.ErrorTypeRequired && e.Detail == "" {
			e.Detail = v.requiredDetail(e.Field)
		}
	}
	if v.schema.cel != nil {
		if celBlocked(errs) {
			c.incomplete = true
		} else {
			celErrs, _ := v.schema.cel.Validate(ctx, nil, v.schema.structural, obj, nil, celconfig.RuntimeCELCostBudget)
			errs = append(errs, withoutConsequences(celErrs, errs)...)
		}
	}
	errs = append(errs, v.checkVersion(obj, errs)...)
	errs = append(errs, validateMetadata(obj)...)
	c.add(errs...)
	if len(c.issues) > 0 {
		return nil
	}
	p := &v1alpha1.OntoPlatform{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, p, true); err != nil {
		// The schema is generated from the types, so this means they disagree:
		// a stale CRD (make generate), not bad input.
		c.add(field.InternalError(nil, fmt.Errorf("convert to OntoPlatform: %w", err)))
		return nil
	}
	if errs := slices.Concat(checkQuantities(p), checkPatches(p.Spec.Patches), checkIngressAnnotations(p)); len(errs) > 0 {
		c.add(errs...)
		return nil
	}
	return p
}

// checkQuantities rejects negative resources and quota, and sizes that must be
// positive. The schema's quantity pattern allows a sign, and a CEL rule per resource
// name would exceed the API server's cost budget; the API server would otherwise only
// reject the rendered Deployment or PVC, far from the spec field that caused it.
func checkQuantities(p *v1alpha1.OntoPlatform) field.ErrorList {
	var errs field.ErrorList
	nonNegative := func(path *field.Path, list map[corev1.ResourceName]resource.Quantity) {
		for _, name := range slices.Sorted(maps.Keys(list)) {
			if q := list[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must not be negative"))
			}
		}
	}
	positive := func(path *field.Path, q *resource.Quantity) {
		if q != nil && q.Sign() <= 0 {
			errs = append(errs, field.Invalid(path, q.String(), "must be greater than zero"))
		}
	}
	for _, comp := range p.Spec.Components() {
		path := field.NewPath(strings.Split(comp.SpecPath, ".")[0], strings.Split(comp.SpecPath, ".")[1:]...)
		var res *v1alpha1.Resources
		if comp.Stateful != nil {
			res = comp.Stateful.Resources
			positive(path.Child("storage"), comp.Stateful.Storage)
		} else {
			res = comp.Service.Resources
			if a := comp.Service.Autoscaling; a != nil {
				for i, m := range a.PodsMetrics {
					positive(path.Child("autoscaling", "podsMetrics").Index(i).Child("averageValue"), &m.AverageValue)
				}
			}
		}
		if res != nil {
			nonNegative(path.Child("resources", "requests"), res.Requests)
			nonNegative(path.Child("resources", "limits"), res.Limits)
		}
	}
	if t := p.Spec.Tenancy; t != nil {
		nonNegative(field.NewPath("spec", "tenancy", "resourceQuota"), t.ResourceQuota)
	}
	return errs
}

// celBlocked mirrors the API server (customResourceStrategy.Validate), which does not
// evaluate CEL rules over an object with type errors: a rule reading a string where
// its schema says integer fails with a message about the rule, not the value. The
// server also blocks on missing required fields, unsupported enum values and values
// over maxLength/maxItems; offline those do not block, because the per-call cost limit
// still bounds every rule, rules guard optional fields with has(), and a CEL error at
// or above a field the schema rejected is dropped (withoutConsequences). Reporting
// every error at once matters more here than for a server that answers one request.
func celBlocked(errs field.ErrorList) bool {
	for _, e := range errs {
		if e.Type == field.ErrorTypeTypeInvalid {
			return true
		}
	}
	return false
}

// checkVersion requires spec.version to be in the release catalog, a check the schema
// cannot make. It is skipped when the schema already rejected the version.
func (v *Validator) checkVersion(obj map[string]any, errs field.ErrorList) field.ErrorList {
	path := field.NewPath("spec", "version")
	if v.catalog == nil {
		return nil
	}
	for _, e := range errs {
		if e.Field == path.String() || e.Field == "spec" {
			return nil
		}
	}
	spec, _ := obj["spec"].(map[string]any)
	version, ok := spec["version"].(string)
	if !ok {
		return nil
	}
	if _, err := v.catalog.Get(version); err != nil {
		return field.ErrorList{field.Invalid(path, version, err.Error())}
	}
	return nil
}

// validateMetadata checks metadata as the API server does for a namespaced custom
// resource, and more strictly where rendering needs it: name and namespace must be
// DNS labels, because the name prefixes Services and other objects whose names are
// labels, and generateName is refused since apply addresses the platform by name.
func validateMetadata(obj map[string]any) field.ErrorList {
	path := field.NewPath("metadata")
	meta, found, err := schemaobjectmeta.GetObjectMeta(obj, false)
	if err != nil {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, err.Error())}
	}
	if !found {
		return field.ErrorList{field.Required(path.Child("name"), "every OntoPlatform needs a name")}
	}
	var errs field.ErrorList
	if meta.GenerateName != "" {
		errs = append(errs, field.Forbidden(path.Child("generateName"), "an OntoPlatform is applied by name; set metadata.name"))
		meta.GenerateName = ""
	}
	// The namespace may come from the command line (-n), so the file may omit it.
	namespaced := meta.DeepCopy()
	if namespaced.Namespace == "" {
		namespaced.Namespace = metav1.NamespaceDefault
	}
	errs = append(errs, metavalidation.ValidateObjectMeta(namespaced, true, nameIsDNSLabel, path)...)
	return errs
}

func nameIsDNSLabel(name string, prefix bool) []string {
	if prefix {
		name = strings.TrimSuffix(name, "-")
	}
	return utilvalidation.IsDNS1123Label(name)
}

func docLabel(index int) string {
	if index == 0 {
		return ""
	}
	return " " + strconv.Itoa(index)
}

// parseLine turns the "line N" of a YAML parser error into a file line.
func parseLine(msg string, offset, fallback int) int {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n + offset
		}
	}
	return fallback
}

// stripLine drops the parser's own "yaml: line N:" prefix, which names a line of the
// document rather than of the file; the issue carries the file's line instead.
func stripLine(msg string) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if loc := yamlLine.FindStringIndex(msg); loc != nil && loc[0] == 0 {
		msg = strings.TrimPrefix(msg[loc[1]:], ":")
	}
	return strings.TrimSpace(msg)
}
