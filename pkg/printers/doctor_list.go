/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/coomia-dip/kubectl-onto/pkg/doctor"
)

// DoctorListView shows the reports of every platform of the cluster (doctor -A): each
// report as DoctorView shows it, then one line naming the platforms that failed.
type DoctorListView struct {
	Reports []*doctor.Report
	Strict  bool
}

// doctorList is -o json|yaml of doctor -A. Its names are part of the CLI's interface.
type doctorList struct {
	// Success is true when every platform's report is.
	Success   bool         `json:"success"`
	Platforms []DoctorView `json:"platforms"`
}

func (v DoctorListView) list() doctorList {
	l := doctorList{Success: true, Platforms: []DoctorView{}}
	for _, r := range v.Reports {
		l.Success = l.Success && r.Success
		l.Platforms = append(l.Platforms, DoctorView{Report: r, Strict: v.Strict})
	}
	return l
}

// MarshalJSON prints {success, platforms: [report...]}.
func (v DoctorListView) MarshalJSON() ([]byte, error) { return json.Marshal(v.list()) }

// WriteJUnit prints every platform's suites in one document, each suite named after
// its platform and category.
func (v DoctorListView) WriteJUnit(out io.Writer) error {
	var suites []junitTestSuite
	for _, r := range v.Reports {
		suites = append(suites, junitSuitesOf(r, v.Strict, r.Platform)...)
	}
	return writeJUnit(out, suites)
}

// WriteText prints each platform's report, then which failed.
func (v DoctorListView) WriteText(out io.Writer, t *Terminal) error {
	if len(v.Reports) == 0 {
		_, err := fmt.Fprintln(out, "No OntoPlatforms found in any namespace.")
		return err
	}
	var failed []string
	for i, r := range v.Reports {
		if i > 0 {
			if _, err := fmt.Fprintln(out); err != nil {
				return err
			}
		}
		if err := (DoctorView{Report: r, Strict: v.Strict}).WriteText(out, t); err != nil {
			return err
		}
		if !r.Success {
			failed = append(failed, r.Platform)
		}
	}
	var line string
	if len(failed) == 0 {
		line = t.OK.Render(markPass) + fmt.Sprintf(" %d platforms, none failed", len(v.Reports))
	} else {
		line = t.Fail.Render(markFail) + fmt.Sprintf(" %d of %d platforms failed: %s", len(failed), len(v.Reports), strings.Join(failed, ", "))
	}
	_, err := fmt.Fprintf(out, "\n%s\n", line)
	return err
}
