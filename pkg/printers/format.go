/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package printers turns the values computed by pkg/ (validation results, rendered
// objects, plans, statuses, findings) into text, JSON or YAML. It is the only package
// that styles output, and the only one that imports lipgloss.
package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// Format is an output format chosen with -o.
type Format string

// Output formats.
const (
	FormatText  Format = "text"
	FormatJSON  Format = "json"
	FormatYAML  Format = "yaml"
	FormatJUnit Format = "junit"
	// FormatName prints kind/name per line, as kubectl's -o name.
	FormatName Format = "name"
	// FormatWide is text with more columns, as kubectl's -o wide.
	FormatWide Format = "wide"
	// FormatJSONPath is "jsonpath=TEMPLATE": the template (kubectl's JSONPath syntax)
	// applied to what -o json prints.
	FormatJSONPath Format = "jsonpath"
)

// Base is the format without its argument: jsonpath for "jsonpath={.x}".
func (f Format) Base() Format {
	if base, _, ok := strings.Cut(string(f), "="); ok {
		return Format(base)
	}
	return f
}

// ParseFormat checks s against the formats a command supports; "" means text.
// jsonpath takes its template after "=" (-o jsonpath='{.phase}').
func ParseFormat(s string, allowed ...Format) (Format, error) {
	if s == "" {
		s = string(FormatText)
	}
	f := Format(strings.ToLower(s))
	if base, tmpl, ok := strings.Cut(s, "="); ok {
		// The template keeps its case; only the format's name is case-insensitive.
		f = Format(strings.ToLower(base) + "=" + tmpl)
		if f.Base() != FormatJSONPath || tmpl == "" {
			return "", fmt.Errorf("unknown output format %q: only jsonpath takes a value, as in -o jsonpath='{.status}'", s)
		}
	} else if f == FormatJSONPath {
		return "", fmt.Errorf("-o jsonpath needs a template, as in -o jsonpath='{.phase}'")
	}
	if slices.Contains(allowed, f.Base()) {
		if f.Base() == FormatJSONPath {
			if _, err := parseJSONPath(string(f)[len("jsonpath="):]); err != nil {
				return "", err
			}
		}
		return f, nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
		if a == FormatJSONPath {
			names[i] = "jsonpath=TEMPLATE"
		}
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, strings.Join(names, ", "))
}

// Namer is a result that can be listed as kind/name lines (-o name).
type Namer interface {
	Names() []string
}

// TextWriter is a result that knows how to show itself to a person. JSON and YAML
// marshal the same value, so every format carries the same facts.
type TextWriter interface {
	WriteText(out io.Writer, term *Terminal) error
}

// JUnitWriter is a result that can be shown as JUnit XML (-o junit), for CI systems
// that read test reports. Only results made of pass/fail checks have a meaningful one.
type JUnitWriter interface {
	WriteJUnit(out io.Writer) error
}

// Write prints v in format f. Wide is the caller's to handle (it changes the view);
// here it prints the text view.
func Write(out io.Writer, f Format, term *Terminal, v TextWriter) error {
	switch f.Base() {
	case FormatJSON:
		return WriteJSON(out, v)
	case FormatYAML:
		return WriteYAML(out, v)
	case FormatJSONPath:
		return writeJSONPath(out, string(f)[len("jsonpath="):], v)
	case FormatName:
		n, ok := v.(Namer)
		if !ok {
			return fmt.Errorf("-o name is not supported here")
		}
		for _, name := range n.Names() {
			if _, err := fmt.Fprintln(out, name); err != nil {
				return err
			}
		}
		return nil
	case FormatJUnit:
		j, ok := v.(JUnitWriter)
		if !ok {
			return fmt.Errorf("-o junit is not supported here")
		}
		return j.WriteJUnit(out)
	default:
		return v.WriteText(out, term)
	}
}

func parseJSONPath(tmpl string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New("output")
	if err := jp.Parse(tmpl); err != nil {
		return nil, fmt.Errorf("-o jsonpath=%s: %w", tmpl, err)
	}
	return jp, nil
}

// writeJSONPath executes tmpl on v as -o json would print it, so the paths are those
// of the JSON output.
func writeJSONPath(out io.Writer, tmpl string, v any) error {
	jp, err := parseJSONPath(tmpl)
	if err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	if err := jp.Execute(out, doc); err != nil {
		return fmt.Errorf("-o jsonpath=%s: %w", tmpl, err)
	}
	return nil
}

// WriteJSON prints v as indented JSON followed by a newline.
func WriteJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteYAML prints v as YAML.
func WriteYAML(out io.Writer, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}
