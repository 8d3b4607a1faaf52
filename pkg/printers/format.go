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
)

// ParseFormat checks s against the formats a command supports; "" means text.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	if s == "" {
		s = string(FormatText)
	}
	f := Format(strings.ToLower(s))
	if slices.Contains(allowed, f) {
		return f, nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, strings.Join(names, ", "))
}

// TextWriter is a result that knows how to show itself to a person. JSON and YAML
// marshal the same value, so every format carries the same facts.
type TextWriter interface {
	WriteText(out io.Writer, term *Terminal) error
}

// Write prints v in format f.
func Write(out io.Writer, f Format, term *Terminal, v TextWriter) error {
	switch f {
	case FormatJSON:
		return WriteJSON(out, v)
	case FormatYAML:
		return WriteYAML(out, v)
	default:
		return v.WriteText(out, term)
	}
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
