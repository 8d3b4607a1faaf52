/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
)

// TestDoctorListView: doctor -A's formats carry every platform, with the overall
// verdict, and JUnit suites that stay apart per platform.
func TestDoctorListView(t *testing.T) {
	healthy := &doctor.Report{Success: true, Platform: "a/one", Categories: []doctor.CategoryResult{{Name: doctor.CategoryWorkloads,
		Checks: []doctor.CheckResult{{Code: "ONTO-WRK-201", Description: "available", Result: doctor.ResultPass}}}}}
	broken := &doctor.Report{Success: false, Platform: "b/two", Categories: []doctor.CategoryResult{{Name: doctor.CategoryWorkloads,
		Checks: []doctor.CheckResult{{Code: "ONTO-WRK-201", Description: "available", Result: doctor.ResultFail,
			Findings: []doctor.Finding{{Severity: doctor.SeverityError, Code: "ONTO-WRK-201", Object: "deployment/gateway", Evidence: "0/1 ready"}}}}}}}
	v := DoctorListView{Reports: []*doctor.Report{healthy, broken}}

	var out bytes.Buffer
	if err := Write(&out, FormatJSON, Plain(&out), v); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Success   bool `json:"success"`
		Platforms []struct {
			Platform string `json:"platform"`
			Success  bool   `json:"success"`
		} `json:"platforms"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if list.Success || len(list.Platforms) != 2 || list.Platforms[1].Platform != "b/two" || list.Platforms[1].Success {
		t.Fatalf("json: %s", out.String())
	}

	out.Reset()
	if err := Write(&out, FormatJUnit, Plain(&out), v); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 2 || doc.Suites[0].Name != "a/one workloads" || doc.Suites[1].Name != "b/two workloads" {
		t.Fatalf("junit: %s", out.String())
	}

	out.Reset()
	if err := Write(&out, FormatText, Plain(&out), v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 of 2 platforms failed: b/two") {
		t.Fatalf("text: %s", out.String())
	}
}
