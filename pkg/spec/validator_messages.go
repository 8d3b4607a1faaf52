/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Regular expressions of the generated schema, by what a user should be told instead
// of the expression. The rules stay the schema's; only the wording changes.
const (
	quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
	semverPattern   = `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	dnsLabelPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	hostPattern     = `^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// externalHostPattern is the host of an external backing service: a DNS name, an
	// IPv4 address, or an IPv6 address (two colons at least, so "db:5432" is refused).
	externalHostPattern = `^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)$`
)

// friendlyDetail rewords an OpenAPI validation message. kube-openapi repeats the field
// path ("spec.x in body should ...") which the issue already shows, and a pattern
// failure prints a regular expression where a user needs an example.
func friendlyDetail(e *field.Error) string {
	d := strings.TrimPrefix(e.Detail, e.Field+" in body ")
	switch {
	case strings.HasSuffix(d, "should match '"+quantityPattern+"'"):
		return `must be a quantity such as "500m", "2" or "4Gi"`
	case strings.HasSuffix(d, "should match '"+semverPattern+"'"):
		return `must be a semantic version such as "1.5.0"`
	case strings.HasSuffix(d, "should match '"+dnsLabelPattern+"'"):
		return `must be a DNS label such as "onto-system": lowercase letters, digits and '-'`
	case strings.HasSuffix(d, "should match '"+hostPattern+"'"):
		return `must be a lowercase DNS name such as "platform.example.com", optionally starting with "*."`
	case strings.HasSuffix(d, "should match '"+externalHostPattern+"'"):
		return `must be a DNS name or IP address such as "db.example.com", without a scheme or port (the port has its own field)`
	}
	return d
}

// withoutConsequences drops the CEL errors at or above a field the schema already
// rejected: a rule over an invalid value ("requests must not exceed limits" over a
// quantity that does not parse) only fails because of it, and its message would be
// noise next to the real one.
func withoutConsequences(celErrs, schemaErrs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, ce := range celErrs {
		consequence := false
		for _, se := range schemaErrs {
			if se.Field == ce.Field || strings.HasPrefix(se.Field, ce.Field+".") || strings.HasPrefix(se.Field, ce.Field+"[") {
				consequence = true
				break
			}
		}
		if !consequence {
			out = append(out, ce)
		}
	}
	return out
}

// jsonTypeName names the JSON type of a decoded value for messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}

// syntaxError turns a YAML parser's error into an issue at the file's line. The
// parser's own words stay (they are what a search finds), followed by what usually
// causes them where the parser's wording is obscure.
func syntaxError(err error, d document) (*field.Error, int) {
	msg := err.Error()
	offset := d.firstLine - 1
	words := stripLine(msg)
	if isParserError(words) {
		// yaml.v3 numbers the lines of its parser's errors from 0 and those of its
		// scanner's from 1 (parser.fail adds 1 for scanner errors only).
		offset++
	}
	line := parseLine(msg, offset, d.firstLine)
	if hint := syntaxHint(words, lineOf(d.data, line-offset)); hint != "" {
		words += "; " + hint
	}
	return field.Invalid(nil, field.OmitValueType{}, "invalid YAML: "+words), line
}

// isParserError tells the messages of yaml.v3's parser (parserc.go) from its
// scanner's. The parser places an error at the start of the enclosing collection.
func isParserError(msg string) bool {
	switch msg {
	case "did not find expected <stream-start>", "did not find expected <document start>",
		"found undefined tag handle", "did not find expected node content",
		"did not find expected '-' indicator", "did not find expected key",
		"did not find expected ',' or ']'", "did not find expected ',' or '}'",
		"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive":
		return true
	}
	return false
}

// syntaxHint says in plain words what commonly causes a YAML parser message, given
// the text of the line the parser stopped at. "" when there is nothing useful to add.
func syntaxHint(msg string, text []byte) string {
	indent := text[:len(text)-len(bytes.TrimLeft(text, " \t"))]
	switch {
	case bytes.ContainsRune(indent, '\t'):
		return "this line is indented with a tab; YAML indents with spaces only"
	case msg == "found character that cannot start any token":
		return "a value starts with a character YAML reserves (such as @, ` or %); put the value in quotes"
	case msg == "mapping values are not allowed in this context":
		return `a "key: value" where none can be: check this line's indentation and the line above for a missing ":", or quote a value that contains ": "`
	case msg == "found unexpected end of stream":
		return "the file ends inside a quoted string or an open [ or {: check for a missing closing quote or bracket"
	case strings.HasPrefix(msg, "did not find expected ',' or"):
		return "a [ ] or { } is not closed, or two of its items have no comma between them"
	case msg == "did not find expected key", msg == "did not find expected '-' indicator":
		return "a line of the block that starts here is indented differently from the others: check the indentation below this line"
	case msg == "could not find expected ':'":
		return `a key without ": " after it, or a value continued on a line that is not indented under its key`
	}
	return ""
}

// lineOf returns the 1-based line n of data, or nil when there is none.
func lineOf(data []byte, n int) []byte {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 == n {
			return bytes.TrimRight(l, "\r")
		}
	}
	return nil
}

// emptyFileMessage is the issue of a file with no document but blanks, comments or
// null: it says what was expected and how to get a starter.
func emptyFileMessage(filename string) string {
	what := "the file is empty"
	if filename == StdinName {
		what = "the standard input is empty"
	}
	return what + ": expected an OntoPlatform document (kubectl onto init writes a starter)"
}

// listIndex matches the list indexes of a field path, to compare paths by shape.
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// requiredDetail says what a missing required field is, in place of the OpenAPI
// validator's bare "Required value". The field path already names the missing field
// (the validator reports spec.version, not spec); the message says what belongs
// there. Every field the schema requires has its own wording
// (TestRequiredFieldsHaveMessages).
func (v *Validator) requiredDetail(path string) string {
	shape := listIndex.ReplaceAllString(path, "[]")
	switch {
	case shape == "spec":
		return "every OntoPlatform needs a spec, with at least spec.version (kubectl onto init writes a starter)"
	case shape == "spec.version":
		msg := `the platform's release version is required, a semantic version such as "1.6.0"`
		if v.catalog != nil {
			if known := v.catalog.Versions(); len(known) > 0 {
				msg = fmt.Sprintf("the platform's release version is required (known: %s)", strings.Join(known, ", "))
			}
		}
		return msg
	case shape == "spec.patches[].patch":
		return "the patch itself is required: a strategic-merge patch (an object) or JSON 6902 operations (a list)"
	case strings.HasSuffix(shape, ".autoscaling.podsMetrics[].name"):
		return "the name of the metric is required, as the custom metrics API serves it"
	case strings.HasSuffix(shape, ".autoscaling.podsMetrics[].averageValue"):
		return `the average value per pod to scale at is required, a quantity such as "100" or "500m"`
	case shape == "spec.global.tls.issuerRef.name":
		return "the name of the cert-manager Issuer or ClusterIssuer (kind) that issues the services' certificates is required"
	case strings.HasSuffix(shape, ".external.host"):
		return "the external service's host is required, a DNS name or IP address such as db.example.com"
	case strings.HasSuffix(shape, ".external.credentialsSecretRef.name"):
		return "the name of the Secret, in the platform's namespace, that holds the credentials is required"
	}
	name := path
	if segs := parsePath(path); len(segs) > 0 {
		name = segs[len(segs)-1].name
	}
	return fmt.Sprintf("required field %q is missing", name)
}

// schemaTypeError matches the OpenAPI validator's detail for a value of the wrong JSON
// type, once friendlyDetail has cut the path: `must be of type boolean: "string"`. Its
// value is the name of the type given, not the value.
var schemaTypeError = regexp.MustCompile(`^must be of type (\w+): "(\w+)"$`)

// schemaTypeNames say what a value of each OpenAPI type is, for messages.
var schemaTypeNames = map[string]string{
	"boolean": "true or false", "integer": "an integer", "number": "a number",
	"string": "a string", "object": "an object", "array": "a list", "null": "null",
}

// typeErrorDetail rewords a wrong-type error so that it shows the value given, read
// from the decoded document obj, instead of the name of its type:
// `Invalid value: "maybe": must be true or false, not a string`. A list or an object is
// not shown (it may be long); the error is unchanged when the value is not found.
func typeErrorDetail(e *field.Error, obj map[string]any) {
	m := schemaTypeError.FindStringSubmatch(e.Detail)
	if m == nil {
		return
	}
	want, got := schemaTypeNames[m[1]], schemaTypeNames[m[2]]
	if want == "" || got == "" {
		return
	}
	value, ok := valueAt(obj, parsePath(e.Field))
	if !ok {
		return
	}
	e.Detail = fmt.Sprintf("must be %s, not %s", want, got)
	switch v := value.(type) {
	case map[string]any, []any:
		e.BadValue = field.OmitValueType{}
	case string:
		e.BadValue = v
		if m[1] == "boolean" && isQuotedBoolean(v) {
			e.Detail += "; write true or false without quotes"
		}
	default:
		e.BadValue = v
	}
}

// isQuotedBoolean reports whether s, a string in the file, would be a boolean to
// kubectl without its quotes (YAML 1.1, which kubectl's YAML reading follows).
func isQuotedBoolean(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n":
		return true
	}
	return false
}

// valueAt is the value at the field path segs in a decoded document. A map key may
// contain dots, unbracketed in the OpenAPI validator's paths, so at a map every run of
// name segments is tried as a key, as lineIndex does.
func valueAt(v any, segs []segment) (any, bool) {
	if len(segs) == 0 {
		return v, true
	}
	switch t := v.(type) {
	case map[string]any:
		for k := 1; k <= len(segs); k++ {
			if k > 1 && segs[k-1].bracket {
				break
			}
			names := make([]string, k)
			for j := range k {
				names[j] = segs[j].name
			}
			if child, ok := t[strings.Join(names, ".")]; ok {
				if out, ok := valueAt(child, segs[k:]); ok {
					return out, true
				}
			}
			if segs[0].bracket {
				break
			}
		}
	case []any:
		i, err := strconv.Atoi(segs[0].name)
		if segs[0].bracket && err == nil && i >= 0 && i < len(t) {
			return valueAt(t[i], segs[1:])
		}
	}
	return nil, false
}
