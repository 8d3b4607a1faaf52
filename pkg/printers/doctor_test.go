/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers_test

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/golden"
	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// doctorReport has every case the views distinguish: pass, warn, fail and skip
// results (with and without a reason), info findings on a passing check, findings
// without an object, a check with an error and a warning (strict or not decides which
// part of JUnit the warning lands in), a multi-line evidence, characters XML escapes,
// and several categories.
func doctorReport() *doctor.Report {
	f := func(sev doctor.Severity, code, object, evidence, fix string) doctor.Finding {
		return doctor.Finding{Severity: sev, Code: code, Object: object, Evidence: evidence, Fix: fix}
	}
	none := []doctor.Finding{}
	r := &doctor.Report{
		Success:  false,
		Platform: "onto-system/onto-production",
		Categories: []doctor.CategoryResult{
			{Name: doctor.CategoryPre, Checks: []doctor.CheckResult{
				{Code: "ONTO-PRE-001", Description: "the API server is reachable", Result: doctor.ResultPass, Findings: none},
				{Code: "ONTO-PRE-002", Description: "the server version is supported", Result: doctor.ResultPass, Findings: []doctor.Finding{
					f(doctor.SeverityInfo, "ONTO-PRE-002", "", "server v1.31.4, supported 1.29 to 1.33", ""),
				}},
				{Code: "ONTO-PRE-004", Description: "a default StorageClass exists", Result: doctor.ResultWarn, Findings: []doctor.Finding{
					f(doctor.SeverityWarning, "ONTO-PRE-004", "", "no StorageClass is marked default; spec.storage.className is empty",
						"set spec.storage.className, or: kubectl annotate storageclass <name> storageclass.kubernetes.io/is-default-class=true"),
				}},
			}},
			{Name: doctor.CategoryWorkloads, Checks: []doctor.CheckResult{
				{Code: "ONTO-WRK-201", Description: "workloads are available", Result: doctor.ResultFail, Findings: []doctor.Finding{
					f(doctor.SeverityError, "ONTO-WRK-201", "deployment/gateway", "0/3 ready: container gateway: ImagePullBackOff\nBack-off pulling image \"registry.local/onto/gateway:1.5.0\"",
						"check spec.images.registry and the pull secret"),
					f(doctor.SeverityError, "ONTO-WRK-201", "statefulset/postgres", "1/3 ready: pod postgres-2 Pending: 0/4 nodes are available: 4 Insufficient memory",
						"lower spec.postgres.resources.requests.memory or add nodes"),
					f(doctor.SeverityWarning, "ONTO-WRK-201", "deployment/ontology-service", "restarted 7 times in the last hour (OOMKilled)",
						"raise spec.ontology.resources.limits.memory"),
				}},
				{Code: "ONTO-WRK-202", Description: "no run is stuck", Result: doctor.ResultPass, Findings: none},
				{Code: "ONTO-WRK-203", Description: "PodDisruptionBudgets allow a drain", Result: doctor.ResultWarn, Findings: []doctor.Finding{
					f(doctor.SeverityWarning, "ONTO-WRK-203", "poddisruptionbudget/gateway", "minAvailable 3 with 3 replicas: <0 disruptions> & no drain can proceed", ""),
					f(doctor.SeverityInfo, "ONTO-WRK-203", "poddisruptionbudget/postgres", "maxUnavailable 1", ""),
				}},
			}},
			{Name: doctor.CategoryScaling, Checks: []doctor.CheckResult{
				{Code: "ONTO-SCL-401", Description: "HorizontalPodAutoscalers have metrics", Result: doctor.ResultSkip, SkipReason: "no autoscaling in the spec", Findings: none},
				{Code: "ONTO-SCL-402", Description: "GPU nodes match the spec", Result: doctor.ResultSkip, Findings: none},
			}},
			{Name: doctor.CategoryTLS, Checks: []doctor.CheckResult{
				{Code: "ONTO-TLS-501", Description: "certificates are valid for 14 days or more", Result: doctor.ResultFail, Findings: []doctor.Finding{
					f(doctor.SeverityError, "ONTO-TLS-501", "secret/gateway-tls", "expired 2026-11-29T00:00:00Z (1 day ago)",
						"renew it: cmctl renew -n onto-system gateway-tls"),
				}},
			}},
		},
	}
	// As doctor.Evaluate fills it in.
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			for i := range ch.Findings {
				ch.Findings[i].Check = ch.Description
			}
		}
	}
	return r
}

func TestDoctorView(t *testing.T) {
	tests := []struct {
		name   string
		format printers.Format
		strict bool
	}{
		{name: "text", format: printers.FormatText},
		{name: "json", format: printers.FormatJSON},
		{name: "yaml", format: printers.FormatYAML},
		{name: "junit", format: printers.FormatJUnit},
		{name: "junit-strict", format: printers.FormatJUnit, strict: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			view := printers.DoctorView{Report: doctorReport(), Strict: tc.strict}
			if err := printers.Write(&out, tc.format, printers.Plain(&out), view); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out.Bytes(), []byte("\x1b[")) {
				t.Errorf("output has an escape code with plain styles:\n%q", out.String())
			}
			golden.Assert(t, out.Bytes(), filepath.Join("testdata", "TestDoctorView", tc.name+".golden"))
		})
	}
}

// TestDoctorJUnitCounts decodes the XML as a CI system would and checks that the
// counts it trusts agree with the cases and with the report.
func TestDoctorJUnitCounts(t *testing.T) {
	type testcase struct {
		Classname string `xml:"classname,attr"`
		Name      string `xml:"name,attr"`
		Failure   *struct {
			Message string `xml:"message,attr"`
			Type    string `xml:"type,attr"`
			Body    string `xml:",chardata"`
		} `xml:"failure"`
		Skipped *struct {
			Message string `xml:"message,attr"`
		} `xml:"skipped"`
		SystemOut string `xml:"system-out"`
	}
	type testsuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}
	tests := []struct {
		strict                   bool
		tests, failures, skipped int
	}{
		// Failing: WRK-201 and TLS-501 (errors); strict adds PRE-004 and WRK-203 (warnings only).
		{strict: false, tests: 9, failures: 2, skipped: 2},
		{strict: true, tests: 9, failures: 4, skipped: 2},
	}
	for _, tc := range tests {
		report := doctorReport()
		var out bytes.Buffer
		if err := printers.WriteDoctorJUnit(&out, report, tc.strict); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), `<?xml version="1.0" encoding="UTF-8"?>`+"\n") {
			t.Errorf("strict=%v: no XML header: %.60q", tc.strict, out.String())
		}
		var doc testsuites
		if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("strict=%v: %v", tc.strict, err)
		}
		if doc.Name != "kubectl-onto doctor" || doc.Tests != tc.tests || doc.Failures != tc.failures || doc.Skipped != tc.skipped {
			t.Errorf("strict=%v: testsuites %q tests=%d failures=%d skipped=%d, want tests=%d failures=%d skipped=%d",
				tc.strict, doc.Name, doc.Tests, doc.Failures, doc.Skipped, tc.tests, tc.failures, tc.skipped)
		}
		if len(doc.Suites) != len(report.Categories) {
			t.Fatalf("strict=%v: %d testsuites, want one per category (%d)", tc.strict, len(doc.Suites), len(report.Categories))
		}
		total := 0
		for i, s := range doc.Suites {
			cat := report.Categories[i]
			failures, skipped := 0, 0
			for j, c := range s.Cases {
				ch := cat.Checks[j]
				if c.Classname != "onto.doctor."+string(cat.Name) || c.Name != ch.Code+" "+ch.Description {
					t.Errorf("strict=%v: testcase %q %q for %s", tc.strict, c.Classname, c.Name, ch.Code)
				}
				wantFail := ch.Result == doctor.ResultFail || (tc.strict && ch.Result == doctor.ResultWarn)
				if (c.Failure != nil) != wantFail {
					t.Errorf("strict=%v: %s: failure %v, want %v", tc.strict, ch.Code, c.Failure != nil, wantFail)
				}
				if (c.Skipped != nil) != (ch.Result == doctor.ResultSkip) {
					t.Errorf("strict=%v: %s: skipped %v, result %s", tc.strict, ch.Code, c.Skipped != nil, ch.Result)
				}
				if c.Failure != nil {
					failures++
				}
				if c.Skipped != nil {
					skipped++
				}
				// Every finding is in the case once: in the failure or in system-out.
				// (By the evidence's first line: the next ones are indented.)
				for _, f := range ch.Findings {
					ev, _, _ := strings.Cut(f.Evidence, "\n")
					in := strings.Count(c.SystemOut, ev)
					if c.Failure != nil {
						in += strings.Count(c.Failure.Body, ev)
					}
					if in != 1 {
						t.Errorf("strict=%v: %s: finding %q appears %d times, want once", tc.strict, ch.Code, f.Evidence, in)
					}
				}
			}
			if s.Name != string(cat.Name) || s.Tests != len(cat.Checks) || s.Tests != len(s.Cases) || s.Failures != failures || s.Skipped != skipped {
				t.Errorf("strict=%v: testsuite %q tests=%d (%d cases) failures=%d skipped=%d, want %q tests=%d failures=%d skipped=%d",
					tc.strict, s.Name, s.Tests, len(s.Cases), s.Failures, s.Skipped, cat.Name, len(cat.Checks), failures, skipped)
			}
			total += s.Tests
		}
		if total != doc.Tests {
			t.Errorf("strict=%v: suites hold %d tests, testsuites says %d", tc.strict, total, doc.Tests)
		}
	}
}

// TestDoctorViewSummary: the last line's verdict matches the exit code's (Success,
// and --strict for warnings), and its counts are of findings and checks.
func TestDoctorViewSummary(t *testing.T) {
	check := func(res doctor.Result, sevs ...doctor.Severity) doctor.CheckResult {
		c := doctor.CheckResult{Code: "ONTO-PRE-001", Description: "d", Result: res, Findings: []doctor.Finding{}}
		for _, s := range sevs {
			c.Findings = append(c.Findings, doctor.Finding{Severity: s, Evidence: "e"})
		}
		return c
	}
	report := func(success bool, checks ...doctor.CheckResult) *doctor.Report {
		return &doctor.Report{Success: success, Categories: []doctor.CategoryResult{{Name: doctor.CategoryPre, Checks: checks}}}
	}
	skip := doctor.CheckResult{Code: "ONTO-PRE-002", Description: "d", Result: doctor.ResultSkip, SkipReason: "r"}
	tests := []struct {
		name   string
		report *doctor.Report
		strict bool
		want   string
	}{
		{name: "pass", report: report(true, check(doctor.ResultPass, doctor.SeverityInfo), skip),
			want: "✓ no problems in 2 checks (1 skipped)"},
		{name: "warnings", report: report(true, check(doctor.ResultWarn, doctor.SeverityWarning, doctor.SeverityWarning), check(doctor.ResultPass)),
			want: "‼ 2 warnings in 2 checks"},
		{name: "warnings-strict", report: report(false, check(doctor.ResultWarn, doctor.SeverityWarning)), strict: true,
			want: "✗ 1 warning in 1 check; --strict fails on warnings"},
		{name: "errors", report: report(false, check(doctor.ResultFail, doctor.SeverityError, doctor.SeverityWarning), check(doctor.ResultFail, doctor.SeverityError), skip),
			want: "✗ 2 errors, 1 warning in 3 checks (1 skipped)"},
		{name: "fatal", report: doctor.Fatal("onto/onto", "ONTO-PRE-001", "the API server is reachable", "connection refused", ""),
			want: "✗ 1 error in 1 check"},
		{name: "none", report: &doctor.Report{Success: true}, want: "- no checks ran"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := (printers.DoctorView{Report: tc.report, Strict: tc.strict}).WriteText(&out, printers.Plain(&out)); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if got := lines[len(lines)-1]; got != tc.want {
				t.Errorf("summary %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDoctorJUnitEscapes: whatever a container's message holds, the document parses
// and the text reads back as written, a character XML cannot carry aside.
func TestDoctorJUnitEscapes(t *testing.T) {
	evidence := "first line\nsecond\tline \"q\" 'a' <x> & ]]> \x1b[31mred"
	r := &doctor.Report{Categories: []doctor.CategoryResult{{Name: doctor.CategoryPre, Checks: []doctor.CheckResult{
		{Code: "ONTO-PRE-001", Description: "d", Result: doctor.ResultFail, Findings: []doctor.Finding{
			{Severity: doctor.SeverityError, Object: "pod/p", Evidence: evidence},
			{Severity: doctor.SeverityInfo, Evidence: evidence},
		}},
	}}}}
	var out bytes.Buffer
	if err := printers.WriteDoctorJUnit(&out, r, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Failure struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v in:\n%s", err, out.String())
	}
	want := "first line\n  second\tline \"q\" 'a' <x> & ]]> \uFFFD[31mred"
	if len(doc.Cases) != 1 {
		t.Fatalf("%d testcases, want 1", len(doc.Cases))
	}
	c := doc.Cases[0]
	if c.Failure.Body != "error: pod/p: "+want+"\n" || c.SystemOut != "info: "+want+"\n" {
		t.Errorf("failure body %q, system-out %q", c.Failure.Body, c.SystemOut)
	}
	if c.Failure.Message != "pod/p: first line …" {
		t.Errorf("failure message %q", c.Failure.Message)
	}
}

func TestWriteJUnitUnsupported(t *testing.T) {
	var out bytes.Buffer
	err := printers.Write(&out, printers.FormatJUnit, printers.Plain(&out), printers.ValidationResult{})
	if err == nil || err.Error() != "-o junit is not supported here" {
		t.Fatalf("got %v, want -o junit is not supported here", err)
	}
}
