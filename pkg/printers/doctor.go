/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
)

// DoctorView shows a doctor report: as text in the manner of `linkerd check`, as
// JSON/YAML (the report itself), and as JUnit XML for CI.
type DoctorView struct {
	Report *doctor.Report
	// Strict is --strict: warnings fail the run. It changes the summary line and, in
	// JUnit, turns warnings into failures; the report's Success already accounts for it.
	Strict bool
}

// MarshalJSON prints the report alone, so -o json|yaml|jsonpath see the report's
// documented shape and not this view. Missing lists print as [] rather than null, so
// a script can iterate without a null check whatever built the report.
func (v DoctorView) MarshalJSON() ([]byte, error) {
	if v.Report == nil {
		return []byte("null"), nil
	}
	r := *v.Report
	r.Categories = make([]doctor.CategoryResult, len(v.Report.Categories))
	for i, c := range v.Report.Categories {
		c.Checks = append([]doctor.CheckResult{}, c.Checks...)
		for j := range c.Checks {
			if c.Checks[j].Findings == nil {
				c.Checks[j].Findings = []doctor.Finding{}
			}
		}
		r.Categories[i] = c
	}
	return json.Marshal(r)
}

// WriteJUnit prints the report as JUnit XML (-o junit).
func (v DoctorView) WriteJUnit(out io.Writer) error {
	return WriteDoctorJUnit(out, v.Report, v.Strict)
}

// Marks of a check's result and of a finding's severity, as `linkerd check` uses them
// (with ✓ for its √): one glyph, so the codes after them line up.
const (
	markPass = "✓"
	markWarn = "‼"
	markFail = "✗"
	markSkip = "-"
	markInfo = "i"
)

// WriteText prints, per category, a header underlined with dashes, then one line per
// check (mark, code, description) with its findings indented below it, each with its
// fix; and a summary line last, since that is what a reader of a long run looks at.
func (v DoctorView) WriteText(out io.Writer, t *Terminal) error {
	r := v.Report
	var b strings.Builder
	if r.Platform != "" {
		fmt.Fprintf(&b, "%s %s\n\n", t.Bold.Render("OntoPlatform"), r.Platform)
	}
	// Codes are padded to the longest, so descriptions start in one column even if an
	// area's name is longer than three letters.
	codeWidth := 0
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			codeWidth = max(codeWidth, len([]rune(ch.Code)))
		}
	}
	for _, c := range r.Categories {
		name := string(c.Name)
		// The category's own name, not a title: it is what -o json and the JUnit suites
		// call it, so a reader can find one in the other.
		fmt.Fprintf(&b, "%s\n%s\n", t.Header.Render(name), t.Faint.Render(strings.Repeat("-", len([]rune(name)))))
		for _, ch := range c.Checks {
			code := ch.Code + strings.Repeat(" ", codeWidth-len([]rune(ch.Code)))
			if ch.Result == doctor.ResultSkip {
				why := "skipped"
				if ch.SkipReason != "" {
					why += ": " + ch.SkipReason
				}
				// Faint as a whole: a skipped check is not something to act on.
				b.WriteString(t.Faint.Render(fmt.Sprintf("%s %s  %s (%s)", markSkip, code, ch.Description, why)) + "\n")
				continue
			}
			fmt.Fprintf(&b, "%s %s  %s\n", resultMark(t, ch.Result), code, ch.Description)
			for _, f := range ch.Findings {
				// Continuation lines (a container's message, a list) stay under the text,
				// so the next finding's mark is still the only thing in its column.
				fmt.Fprintf(&b, "    %s %s\n", severityMark(t, f.Severity), indentLines(findingText(f), "      "))
				if f.Fix != "" {
					fmt.Fprintf(&b, "      fix: %s\n", indentLines(f.Fix, "           "))
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(v.summary(t) + "\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// summary is the last line: the counts of findings by severity, how many checks ran,
// and a mark saying whether the run failed, the same verdict as the exit code.
func (v DoctorView) summary(t *Terminal) string {
	r := v.Report
	checks, skipped := 0, 0
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			checks++
			if ch.Result == doctor.ResultSkip {
				skipped++
			}
		}
	}
	in := "in " + plural(checks, "check", "checks")
	if skipped > 0 {
		in += fmt.Sprintf(" (%d skipped)", skipped)
	}
	n := r.Counts()
	errs, warns := n[doctor.SeverityError], n[doctor.SeverityWarning]
	var problems []string
	if errs > 0 {
		problems = append(problems, plural(errs, "error", "errors"))
	}
	if warns > 0 {
		problems = append(problems, plural(warns, "warning", "warnings"))
	}
	// !Success counts too: the exit code follows it, and the line must not say ✓
	// when the command then exits 1.
	failed := errs > 0 || (v.Strict && warns > 0) || !r.Success
	switch {
	case checks == 0:
		return t.Faint.Render(markSkip) + " no checks ran"
	case failed && errs == 0 && warns > 0:
		return t.Fail.Render(markFail) + " " + strings.Join(problems, ", ") + " " + in + "; --strict fails on warnings"
	case failed && len(problems) > 0:
		return t.Fail.Render(markFail) + " " + strings.Join(problems, ", ") + " " + in
	case failed:
		return t.Fail.Render(markFail) + " failed " + in
	case warns > 0:
		return t.Warn.Render(markWarn) + " " + strings.Join(problems, ", ") + " " + in
	default:
		return t.OK.Render(markPass) + " no problems " + in
	}
}

func resultMark(t *Terminal, r doctor.Result) string {
	switch r {
	case doctor.ResultPass:
		return t.OK.Render(markPass)
	case doctor.ResultWarn:
		return t.Warn.Render(markWarn)
	case doctor.ResultFail:
		return t.Fail.Render(markFail)
	case doctor.ResultSkip:
		return t.Faint.Render(markSkip)
	}
	return "?"
}

func severityMark(t *Terminal, s doctor.Severity) string {
	switch s {
	case doctor.SeverityError:
		return t.Fail.Render(markFail)
	case doctor.SeverityWarning:
		return t.Warn.Render(markWarn)
	}
	return t.Faint.Render(markInfo)
}

// indentLines puts indent before every line of s but the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

// JUnit XML, in the shape CI systems (Jenkins, GitLab, GitHub test reporters) read:
// testsuites > testsuite (one per category) > testcase (one per check). Counts are
// attributes the readers trust without looking at the cases, so they are computed from
// the cases written, never separately.
type junitTestSuites struct {
	XMLName  xml.Name         `xml:"testsuites"`
	Name     string           `xml:"name,attr"`
	Tests    int              `xml:"tests,attr"`
	Failures int              `xml:"failures,attr"`
	Skipped  int              `xml:"skipped,attr"`
	Suites   []junitTestSuite `xml:"testsuite"`
}

type junitTestSuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Skipped  int             `xml:"skipped,attr"`
	Cases    []junitTestCase `xml:"testcase"`
}

type junitTestCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",innerxml"` // escaped by junitEscape
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

type junitText struct {
	Text string `xml:",innerxml"` // escaped by junitEscape
}

// junitSuitesName names the whole run in a CI system's test view.
const junitSuitesName = "kubectl-onto doctor"

// WriteDoctorJUnit prints r as JUnit XML: one testsuite per category, one testcase per
// check. A check fails when it has an error finding, or a warning under strict; the
// failure's body lists those findings with their fixes, and every other finding
// (warnings when not strict, info) goes to system-out, so each finding appears once. A
// skipped check is <skipped> with its reason.
func WriteDoctorJUnit(out io.Writer, r *doctor.Report, strict bool) error {
	return writeJUnit(out, junitSuitesOf(r, strict, ""))
}

// junitSuitesOf is r's testsuites; prefix (a platform's namespace/name, for doctor -A)
// goes before each suite's name and into each case's classname, so the suites of two
// platforms stay apart in a CI system's view.
func junitSuitesOf(r *doctor.Report, strict bool, prefix string) []junitTestSuite {
	var suites []junitTestSuite
	for _, c := range r.Categories {
		suite := junitTestSuite{Name: string(c.Name)}
		classname := "onto.doctor." + string(c.Name)
		if prefix != "" {
			suite.Name = prefix + " " + suite.Name
			classname = "onto.doctor." + strings.ReplaceAll(prefix, "/", ".") + "." + string(c.Name)
		}
		for _, ch := range c.Checks {
			tc := junitTestCase{Classname: classname, Name: ch.Code + " " + ch.Description}
			if ch.Result == doctor.ResultSkip {
				tc.Skipped = &junitSkipped{Message: ch.SkipReason}
				suite.Skipped++
			} else {
				var failing, other []doctor.Finding
				for _, f := range ch.Findings {
					if f.Severity == doctor.SeverityError || (strict && f.Severity == doctor.SeverityWarning) {
						failing = append(failing, f)
					} else {
						other = append(other, f)
					}
				}
				if len(failing) > 0 {
					tc.Failure = junitFailureOf(failing)
					suite.Failures++
				}
				if len(other) > 0 {
					tc.SystemOut = &junitText{Text: junitEscape(junitFindings(other))}
				}
			}
			suite.Tests++
			suite.Cases = append(suite.Cases, tc)
		}
		suites = append(suites, suite)
	}
	return suites
}

// writeJUnit prints suites under one testsuites element whose counts are their sums.
func writeJUnit(out io.Writer, suites []junitTestSuite) error {
	doc := junitTestSuites{Name: junitSuitesName, Suites: []junitTestSuite{}}
	for _, suite := range suites {
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Skipped += suite.Skipped
		doc.Suites = append(doc.Suites, suite)
	}
	data, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(out, xml.Header); err != nil {
		return err
	}
	if _, err := out.Write(append(data, '\n')); err != nil {
		return err
	}
	return nil
}

// junitFailureOf is the failure of a check with the given failing findings. The
// message, the one line CI views show beside the test's name, is the first finding;
// the body has them all. Its type is "error" when any finding is an error, "warning"
// when only --strict made it fail.
func junitFailureOf(failing []doctor.Finding) *junitFailure {
	typ := string(doctor.SeverityWarning)
	for _, f := range failing {
		if f.Severity == doctor.SeverityError {
			typ = string(doctor.SeverityError)
		}
	}
	// One line: an attribute keeps a newline only as &#xA;, which CI views show raw.
	msg := firstLine(findingText(failing[0]))
	if len(failing) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(failing)-1)
	}
	return &junitFailure{Message: msg, Type: typ, Body: junitEscape(junitFindings(failing))}
}

// junitEscape escapes s for element content. encoding/xml's chardata escapes newlines
// too (&#xA;), which is valid but leaves a multi-line body as one unreadable line for
// whoever opens the file; in element content a newline needs no escape. CDATA is no
// way out: encoding/xml writes it unchecked, so a control character in a container's
// message would make the document invalid, where EscapeText replaces it.
func junitEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	// Quotes need no escape outside attributes either.
	return strings.NewReplacer("&#xA;", "\n", "&#x9;", "\t", "&#34;", `"`, "&#39;", "'").Replace(b.String())
}

// junitFindings lists findings as text, one block per finding: severity, object,
// evidence, then the fix indented below.
func junitFindings(fs []doctor.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s: %s\n", f.Severity, indentLines(findingText(f), "  "))
		if f.Fix != "" {
			fmt.Fprintf(&b, "  fix: %s\n", indentLines(f.Fix, "  "))
		}
	}
	return b.String()
}

// findingText is "object: evidence", or the evidence alone for a finding about the
// cluster as a whole.
func findingText(f doctor.Finding) string {
	if f.Object == "" {
		return f.Evidence
	}
	return f.Object + ": " + f.Evidence
}
