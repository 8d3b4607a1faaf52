/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package doctor diagnoses an installed platform, and a cluster before a first install:
// preflight (API, version, permissions, storage and ingress classes, served kinds,
// capacity, quota, admission) and health (conditions, stuck runs, drift, workloads,
// nodes, autoscaling, certificates).
//
// It works in two steps. Gather reads one snapshot of the cluster, an Env, with bounded
// concurrency and within one timeout; it is the only code here that talks to the API
// server, and it never writes (dry-runs aside). Each Check then looks at that Env alone:
// pure, no I/O, independent of every other check, so checks are tested with small Env
// values built in the test, including states a shared test cluster cannot show (an old
// server, RBAC denied, no GPU node). Nothing here prints; printers.DoctorView shows a
// Report.
//
// Codes (ONTO-PRE-001...) are stable: documented in docs/doctor.md's table, never
// renumbered; a retired check keeps its code unused.
package doctor

import (
	"sort"
)

// Severity of a finding.
type Severity string

// Severities, most severe first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Category groups checks; categories are reported in the order of Categories.
type Category string

// Categories of checks.
const (
	CategoryPre       Category = "pre"
	CategoryPlatform  Category = "platform"
	CategoryWorkloads Category = "workloads"
	CategoryNodes     Category = "nodes"
	CategoryScaling   Category = "scaling"
	CategoryTLS       Category = "tls"
)

// Categories lists every category in report order.
func Categories() []Category {
	return []Category{CategoryPre, CategoryPlatform, CategoryWorkloads, CategoryNodes, CategoryScaling, CategoryTLS}
}

// Finding is one thing a check found. Its JSON names are part of the CLI's interface
// (`doctor -o json`): never rename them.
type Finding struct {
	Severity Severity `json:"severity"`
	// Code is the check's code, ONTO-WRK-202.
	Code string `json:"code"`
	// Check is the check's description, for a reader of a lone finding.
	Check string `json:"check"`
	// Object is what the finding is about, kind/name (namespace/kind/name outside the
	// platform's namespace); empty for the cluster as a whole.
	Object string `json:"object,omitempty"`
	// Evidence is what was observed: values, reasons, messages. Never a Secret's value.
	Evidence string `json:"evidence"`
	// Fix is what to do about it, naming the field or command.
	Fix string `json:"fix,omitempty"`
}

// Result of one check.
type Result string

// Results of a check: pass (no finding above info), warn (a warning), fail (an
// error), skip (the check does not apply: no platform installed, no ingress...).
const (
	ResultPass Result = "pass"
	ResultWarn Result = "warn"
	ResultFail Result = "fail"
	ResultSkip Result = "skip"
)

// Check is one diagnosis over an Env.
type Check struct {
	// Code is stable: ONTO-<AREA>-NNN.
	Code        string
	Category    Category
	Description string
	// Pre marks the checks of `doctor --pre`, which need no installed platform.
	Pre bool
	// Skip says why the check does not apply to env, "" when it does.
	Skip func(env *Env) string
	// Run returns the findings; Code, Check and a default Severity are filled in by
	// Run's caller when the check leaves them empty.
	Run func(env *Env) []Finding
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Code        string    `json:"code"`
	Description string    `json:"description"`
	Result      Result    `json:"result"`
	SkipReason  string    `json:"skipReason,omitempty"`
	Findings    []Finding `json:"findings"`
}

// CategoryResult is the outcome of a category's checks, in code order.
type CategoryResult struct {
	Name   Category      `json:"name"`
	Checks []CheckResult `json:"checks"`
}

// Report is the outcome of one doctor run. Its JSON names are part of the CLI's
// interface: never rename them.
type Report struct {
	// Success is false when any finding is an error (or, Strict, a warning).
	Success bool `json:"success"`
	// Platform is namespace/name of the platform diagnosed; empty for --pre of a file
	// not installed yet... it then names the file's platform.
	Platform   string           `json:"platform,omitempty"`
	Categories []CategoryResult `json:"categories"`
}

// Findings returns every finding of the report, in report order.
func (r *Report) Findings() []Finding {
	var out []Finding
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			out = append(out, ch.Findings...)
		}
	}
	return out
}

// Counts returns how many findings of each severity the report holds.
func (r *Report) Counts() map[Severity]int {
	n := map[Severity]int{}
	for _, f := range r.Findings() {
		n[f.Severity]++
	}
	return n
}

// resultOf is a check's result from its findings.
func resultOf(findings []Finding) Result {
	res := ResultPass
	for _, f := range findings {
		switch f.Severity {
		case SeverityError:
			return ResultFail
		case SeverityWarning:
			res = ResultWarn
		}
	}
	return res
}

// Evaluate runs checks over env and builds the report. strict makes a warning fail the
// run. Checks are grouped by category in Categories order, by code within one.
func Evaluate(env *Env, checks []Check, strict bool) *Report {
	r := &Report{Success: true, Platform: env.PlatformRef()}
	byCategory := map[Category][]Check{}
	for _, c := range checks {
		byCategory[c.Category] = append(byCategory[c.Category], c)
	}
	for _, cat := range Categories() {
		cs := byCategory[cat]
		if len(cs) == 0 {
			continue
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].Code < cs[j].Code })
		cr := CategoryResult{Name: cat}
		for _, c := range cs {
			cr.Checks = append(cr.Checks, runCheck(env, c))
		}
		r.Categories = append(r.Categories, cr)
	}
	for _, f := range r.Findings() {
		if f.Severity == SeverityError || (strict && f.Severity == SeverityWarning) {
			r.Success = false
		}
	}
	return r
}

func runCheck(env *Env, c Check) CheckResult {
	res := CheckResult{Code: c.Code, Description: c.Description, Findings: []Finding{}}
	if c.Skip != nil {
		if why := c.Skip(env); why != "" {
			res.Result, res.SkipReason = ResultSkip, why
			return res
		}
	}
	for _, f := range c.Run(env) {
		if f.Code == "" {
			f.Code = c.Code
		}
		if f.Check == "" {
			f.Check = c.Description
		}
		if f.Severity == "" {
			f.Severity = SeverityError
		}
		res.Findings = append(res.Findings, f)
	}
	sort.SliceStable(res.Findings, func(i, j int) bool {
		return severityRank(res.Findings[i].Severity) < severityRank(res.Findings[j].Severity)
	})
	res.Result = resultOf(res.Findings)
	return res
}

func severityRank(s Severity) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Fatal is the report of a run whose gathering failed (API unreachable, forbidden):
// one error finding under code, and no check run, since none could be trusted.
func Fatal(platformRef, code, description, evidence, fix string) *Report {
	f := Finding{Severity: SeverityError, Code: code, Check: description, Evidence: evidence, Fix: fix}
	return &Report{Platform: platformRef, Categories: []CategoryResult{{Name: CategoryPre, Checks: []CheckResult{{
		Code: code, Description: description, Result: ResultFail, Findings: []Finding{f},
	}}}}}
}
