/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-isatty"
	"github.com/muesli/termenv"
)

// Terminal holds the styles for one output stream. Styles are plain (no escape codes)
// unless the stream is a terminal and neither NO_COLOR nor CI is set, so piped output
// and golden files never contain colour codes.
type Terminal struct {
	// Interactive is true when the stream is a terminal that may show spinners and
	// redraw lines.
	Interactive bool

	OK, Warn, Fail, Faint, Bold, Header lipgloss.Style
}

// NewTerminal returns the styles for out. getenv reads the environment (os.Getenv in
// main, a map in tests), so tests never depend on the machine's variables.
func NewTerminal(out io.Writer, getenv func(string) string) *Terminal {
	interactive := isTTY(out) && getenv("NO_COLOR") == "" && getenv("CI") == "" && getenv("TERM") != "dumb"
	r := lipgloss.NewRenderer(out)
	if interactive {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &Terminal{
		Interactive: interactive,
		OK:          r.NewStyle().Foreground(lipgloss.Color("2")),
		Warn:        r.NewStyle().Foreground(lipgloss.Color("3")),
		Fail:        r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		Faint:       r.NewStyle().Faint(true),
		Bold:        r.NewStyle().Bold(true),
		// Not underlined: lipgloss underlines rune by rune, an escape per character.
		Header: r.NewStyle().Bold(true),
	}
}

// Plain returns styles that never emit escape codes, for tests and non-terminals.
func Plain(out io.Writer) *Terminal {
	return NewTerminal(out, func(string) string { return "1" })
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
