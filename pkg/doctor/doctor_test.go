/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// fixedNow is the clock of every test Env.
var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const testNamespace = "onto-system"

// installedEnv is an Env of an installed, healthy platform "onto" and nothing else;
// cases add what they look at.
func installedEnv() *Env {
	return &Env{
		Settings: DefaultSettings(), Now: fixedNow,
		Namespace: testNamespace, NamespaceExists: true,
		Platform: &v1alpha1.OntoPlatform{
			ObjectMeta: metav1.ObjectMeta{Name: "onto", Namespace: testNamespace, Generation: 3},
			Status:     v1alpha1.OntoPlatformStatus{ObservedGeneration: 3},
		},
	}
}

// ago is fixedNow minus d, as the API's time.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(fixedNow.Add(-d)) }

// runByCode runs the check of code from All() over env, as Evaluate does.
func runByCode(t *testing.T, code string, env *Env) CheckResult {
	t.Helper()
	for _, c := range All() {
		if c.Code == code {
			return runCheck(env, c)
		}
	}
	t.Fatalf("no check %s in All()", code)
	return CheckResult{}
}

// wantFinding is what a case expects of one finding.
type wantFinding struct {
	severity Severity
	object   string
	// evidence and fix are substrings the finding's Evidence and Fix must hold;
	// noFix asks for an empty Fix, notEvidence for substrings Evidence must not hold.
	evidence    []string
	notEvidence []string
	fix         []string
	noFix       bool
}

// checkCase is one case of a check: setup changes installedEnv(); skip, when set, is
// a substring of the expected skip reason; want the findings in order (none: pass).
type checkCase struct {
	name  string
	code  string
	setup func(e *Env)
	skip  string
	want  []wantFinding
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.code+"/"+tc.name, func(t *testing.T) {
			env := installedEnv()
			if tc.setup != nil {
				tc.setup(env)
			}
			res := runByCode(t, tc.code, env)
			if res.Code != tc.code {
				t.Fatalf("result code %q, want %q", res.Code, tc.code)
			}
			if tc.skip != "" {
				if res.Result != ResultSkip || !strings.Contains(res.SkipReason, tc.skip) {
					t.Fatalf("got %s (skip reason %q), want skip with %q", res.Result, res.SkipReason, tc.skip)
				}
				if len(res.Findings) != 0 {
					t.Fatalf("a skipped check has findings: %+v", res.Findings)
				}
				return
			}
			if res.Result == ResultSkip {
				t.Fatalf("skipped: %s", res.SkipReason)
			}
			assertFindings(t, res, tc.want)
		})
	}
}

func assertFindings(t *testing.T, res CheckResult, want []wantFinding) {
	t.Helper()
	if len(res.Findings) != len(want) {
		t.Fatalf("%d findings, want %d: %s", len(res.Findings), len(want), dump(res.Findings))
	}
	expected := ResultPass
	for i, w := range want {
		f := res.Findings[i]
		if f.Code != res.Code {
			t.Errorf("finding %d: code %q, want %q", i, f.Code, res.Code)
		}
		if f.Check == "" {
			t.Errorf("finding %d: no check description", i)
		}
		if f.Severity != w.severity {
			t.Errorf("finding %d: severity %q, want %q (%s)", i, f.Severity, w.severity, f.Evidence)
		}
		if f.Object != w.object {
			t.Errorf("finding %d: object %q, want %q", i, f.Object, w.object)
		}
		for _, s := range w.evidence {
			if !strings.Contains(f.Evidence, s) {
				t.Errorf("finding %d: evidence %q lacks %q", i, f.Evidence, s)
			}
		}
		for _, s := range w.notEvidence {
			if strings.Contains(f.Evidence, s) {
				t.Errorf("finding %d: evidence %q holds %q", i, f.Evidence, s)
			}
		}
		for _, s := range w.fix {
			if !strings.Contains(f.Fix, s) {
				t.Errorf("finding %d: fix %q lacks %q", i, f.Fix, s)
			}
		}
		if w.noFix && f.Fix != "" {
			t.Errorf("finding %d: fix %q, want none", i, f.Fix)
		}
		switch {
		case w.severity == SeverityError:
			expected = ResultFail
		case w.severity == SeverityWarning && expected == ResultPass:
			expected = ResultWarn
		}
	}
	if res.Result != expected {
		t.Errorf("result %s, want %s", res.Result, expected)
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// fixedCheck is a check returning findings, for the tests of Evaluate.
func fixedCheck(code string, cat Category, skip string, findings ...Finding) Check {
	c := Check{Code: code, Category: cat, Description: "check " + code,
		Run: func(*Env) []Finding { return append([]Finding(nil), findings...) }}
	if skip != "" {
		c.Skip = func(*Env) string { return skip }
	}
	return c
}

func TestResultOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		findings []Finding
		want     Result
	}{
		{"none", nil, ResultPass},
		{"info only", []Finding{{Severity: SeverityInfo}}, ResultPass},
		{"warning", []Finding{{Severity: SeverityInfo}, {Severity: SeverityWarning}}, ResultWarn},
		{"error", []Finding{{Severity: SeverityWarning}, {Severity: SeverityError}, {Severity: SeverityInfo}}, ResultFail},
	} {
		if got := resultOf(tc.findings); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	checks := []Check{
		fixedCheck("ONTO-TLS-502", CategoryTLS, "", Finding{Severity: SeverityWarning, Evidence: "expires soon"}),
		fixedCheck("ONTO-WRK-202", CategoryWorkloads, "", Finding{Evidence: "crash"}),
		fixedCheck("ONTO-PLT-102", CategoryPlatform, "",
			Finding{Severity: SeverityInfo, Evidence: "i"},
			Finding{Severity: SeverityWarning, Evidence: "w1"},
			Finding{Severity: SeverityError, Evidence: "e"},
			Finding{Severity: SeverityWarning, Evidence: "w2"}),
		fixedCheck("ONTO-PLT-101", CategoryPlatform, ""),
		fixedCheck("ONTO-WRK-201", CategoryWorkloads, "no installed platform", Finding{Evidence: "never seen"}),
		fixedCheck("ONTO-PRE-001", CategoryPre, "", Finding{Severity: SeverityInfo, Evidence: "server v1.33", Code: "ONTO-PRE-001", Check: "own description"}),
	}
	r := Evaluate(installedEnv(), checks, false)

	if r.Platform != "onto-system/onto" {
		t.Errorf("platform %q", r.Platform)
	}
	var cats []Category
	var codes []string
	for _, c := range r.Categories {
		cats = append(cats, c.Name)
		for _, ch := range c.Checks {
			codes = append(codes, ch.Code)
		}
	}
	// Categories in Categories() order, the empty ones (nodes, scaling) left out;
	// codes in order within one.
	if want := []Category{CategoryPre, CategoryPlatform, CategoryWorkloads, CategoryTLS}; !reflect.DeepEqual(cats, want) {
		t.Errorf("categories %v, want %v", cats, want)
	}
	if want := []string{"ONTO-PRE-001", "ONTO-PLT-101", "ONTO-PLT-102", "ONTO-WRK-201", "ONTO-WRK-202", "ONTO-TLS-502"}; !reflect.DeepEqual(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}

	results := map[string]CheckResult{}
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			results[ch.Code] = ch
		}
	}
	for code, want := range map[string]Result{
		"ONTO-PRE-001": ResultPass, "ONTO-PLT-101": ResultPass, "ONTO-PLT-102": ResultFail,
		"ONTO-WRK-201": ResultSkip, "ONTO-WRK-202": ResultFail, "ONTO-TLS-502": ResultWarn,
	} {
		if got := results[code].Result; got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
	if sk := results["ONTO-WRK-201"]; sk.SkipReason != "no installed platform" || sk.Findings == nil || len(sk.Findings) != 0 {
		t.Errorf("skipped check: %+v", sk)
	}
	if pass := results["ONTO-PLT-101"]; pass.Findings == nil || pass.Description != "check ONTO-PLT-101" {
		t.Errorf("passing check: %+v (findings must be [] in JSON)", pass)
	}

	// Findings are ordered by severity, stably.
	var order []string
	for _, f := range results["ONTO-PLT-102"].Findings {
		order = append(order, f.Evidence)
	}
	if want := []string{"e", "w1", "w2", "i"}; !reflect.DeepEqual(order, want) {
		t.Errorf("findings of PLT-102 in order %v, want %v", order, want)
	}
	// Code, Check and a default severity of error are filled in.
	crash := results["ONTO-WRK-202"].Findings[0]
	if crash.Code != "ONTO-WRK-202" || crash.Check != "check ONTO-WRK-202" || crash.Severity != SeverityError {
		t.Errorf("defaults not filled in: %+v", crash)
	}
	if own := results["ONTO-PRE-001"].Findings[0]; own.Check != "own description" {
		t.Errorf("a finding's own Check was replaced: %+v", own)
	}

	if r.Success {
		t.Error("success with errors")
	}
	if got := r.Counts(); got[SeverityError] != 2 || got[SeverityWarning] != 3 || got[SeverityInfo] != 2 {
		t.Errorf("counts %v", got)
	}
	if n := len(r.Findings()); n != 7 {
		t.Errorf("%d findings, want 7", n)
	}
}

func TestEvaluateSuccess(t *testing.T) {
	warn := fixedCheck("ONTO-SCL-402", CategoryScaling, "", Finding{Severity: SeverityWarning, Evidence: "at max"})
	info := fixedCheck("ONTO-PLT-103", CategoryPlatform, "", Finding{Severity: SeverityInfo, Evidence: "a run holds it"})
	fail := fixedCheck("ONTO-TLS-501", CategoryTLS, "", Finding{Evidence: "missing"})
	skipped := fixedCheck("ONTO-TLS-502", CategoryTLS, "no Ingress with TLS", Finding{Evidence: "never run"})
	for _, tc := range []struct {
		name   string
		checks []Check
		strict bool
		want   bool
	}{
		{"nothing", nil, false, true},
		{"info", []Check{info}, true, true},
		{"warning", []Check{info, warn}, false, true},
		{"warning, strict", []Check{info, warn}, true, false},
		{"error", []Check{fail}, false, false},
		{"skipped error", []Check{skipped}, true, true},
	} {
		r := Evaluate(installedEnv(), tc.checks, tc.strict)
		if r.Success != tc.want {
			t.Errorf("%s: success %v, want %v", tc.name, r.Success, tc.want)
		}
	}
}

func TestPlatformRef(t *testing.T) {
	withFile := &Env{Desired: &plan.Desired{Platform: &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "fresh", "namespace": "onto-new"}}}}}
	for _, tc := range []struct {
		name string
		env  *Env
		want string
	}{
		{"installed", installedEnv(), "onto-system/onto"},
		{"file only", withFile, "onto-new/fresh"},
		{"nothing", &Env{}, ""},
	} {
		if got := tc.env.PlatformRef(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if got := Evaluate(tc.env, nil, false).Platform; got != tc.want {
			t.Errorf("%s: report platform %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSelect(t *testing.T) {
	pre := fixedCheck("ONTO-PRE-001", CategoryPre, "")
	pre.Pre = true
	pressure := fixedCheck("ONTO-NOD-302", CategoryNodes, "")
	pressure.Pre = true
	checks := []Check{
		pre,
		fixedCheck("ONTO-PLT-101", CategoryPlatform, ""),
		fixedCheck("ONTO-WRK-202", CategoryWorkloads, ""),
		fixedCheck("ONTO-WRK-203", CategoryWorkloads, ""),
		fixedCheck("ONTO-NOD-301", CategoryNodes, ""),
		pressure,
		fixedCheck("ONTO-TLS-501", CategoryTLS, ""),
	}
	for _, tc := range []struct {
		name  string
		pre   bool
		cats  []Category
		codes []string
		want  []string
	}{
		{"all", false, nil, nil, []string{"ONTO-PRE-001", "ONTO-PLT-101", "ONTO-WRK-202", "ONTO-WRK-203", "ONTO-NOD-301", "ONTO-NOD-302", "ONTO-TLS-501"}},
		{"pre", true, nil, nil, []string{"ONTO-PRE-001", "ONTO-NOD-302"}},
		{"category", false, []Category{CategoryWorkloads}, nil, []string{"ONTO-WRK-202", "ONTO-WRK-203"}},
		{"categories", false, []Category{CategoryTLS, CategoryPlatform}, nil, []string{"ONTO-PLT-101", "ONTO-TLS-501"}},
		{"pre and category", true, []Category{CategoryNodes}, nil, []string{"ONTO-NOD-302"}},
		{"full code", false, nil, []string{"ONTO-WRK-203"}, []string{"ONTO-WRK-203"}},
		{"code without prefix", false, nil, []string{"WRK-203"}, []string{"ONTO-WRK-203"}},
		{"lowercase", false, nil, []string{"wrk-202", "onto-tls-501"}, []string{"ONTO-WRK-202", "ONTO-TLS-501"}},
		{"mixed case", false, nil, []string{"Onto-Nod-301"}, []string{"ONTO-NOD-301"}},
		{"code and category", false, []Category{CategoryNodes}, []string{"wrk-202", "nod-302"}, []string{"ONTO-NOD-302"}},
		{"unknown code", false, nil, []string{"WRK-299"}, nil},
		{"code not a pre check", true, nil, []string{"PLT-101"}, nil},
	} {
		var got []string
		for _, c := range Select(checks, tc.pre, tc.cats, tc.codes) {
			got = append(got, c.Code)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAll checks the catalogue: codes well-formed and unique, every category known,
// every check runnable.
func TestAll(t *testing.T) {
	codeRE := regexp.MustCompile(`^ONTO-[A-Z]{3}-[0-9]{3}$`)
	known := map[Category]bool{}
	for _, c := range Categories() {
		known[c] = true
	}
	seen := map[string]bool{}
	for _, c := range All() {
		if !codeRE.MatchString(c.Code) {
			t.Errorf("malformed code %q", c.Code)
		}
		if seen[c.Code] {
			t.Errorf("code %s twice", c.Code)
		}
		seen[c.Code] = true
		if !known[c.Category] {
			t.Errorf("%s: unknown category %q", c.Code, c.Category)
		}
		if c.Description == "" || c.Run == nil {
			t.Errorf("%s: no description or no Run", c.Code)
		}
	}
	for _, code := range []string{CodeCRD, CodeConditions, CodeStuckWork, CodeDrift,
		CodeNotAvailable, CodeCrashLoop, CodeOOMKilled, CodeImagePull, CodeEvicted, CodePending, CodeRestarts, CodeNeverReady, CodePostgresPrimary,
		CodeNodeNotReady, CodeNodePressure, CodeHPAInactive, CodeHPAAtMax, CodePDBBlocks,
		CodeTLSMissing, CodeTLSExpiry, CodeTLSHostNames} {
		if !seen[code] {
			t.Errorf("%s missing from All()", code)
		}
	}
}

// TestEvaluateNothingInstalled runs the health checks over an empty cluster: the CRD
// check fails, the node pressure check passes, every other check is skipped.
func TestEvaluateNothingInstalled(t *testing.T) {
	env := &Env{Settings: DefaultSettings(), Now: fixedNow, Namespace: testNamespace}
	cats := []Category{CategoryPlatform, CategoryWorkloads, CategoryNodes, CategoryScaling, CategoryTLS}
	r := Evaluate(env, Select(All(), false, cats, nil), false)
	if r.Success {
		t.Error("success without a CRD")
	}
	for _, c := range r.Categories {
		for _, ch := range c.Checks {
			want := ResultSkip
			switch ch.Code {
			case CodeCRD:
				want = ResultFail
			case CodeNodePressure:
				want = ResultPass
			}
			if ch.Result != want {
				t.Errorf("%s: %s (%s), want %s", ch.Code, ch.Result, ch.SkipReason, want)
			}
		}
	}
}

func TestFatal(t *testing.T) {
	r := Fatal("onto-system/onto", "ONTO-PRE-001", "the API server is reachable",
		"dial tcp 10.0.0.1:6443: connect: connection refused", "check the kubeconfig's context")
	if r.Success || r.Platform != "onto-system/onto" {
		t.Errorf("report %+v", r)
	}
	if len(r.Categories) != 1 || r.Categories[0].Name != CategoryPre || len(r.Categories[0].Checks) != 1 {
		t.Fatalf("shape: %s", dump(r))
	}
	ch := r.Categories[0].Checks[0]
	if ch.Code != "ONTO-PRE-001" || ch.Description != "the API server is reachable" || ch.Result != ResultFail || len(ch.Findings) != 1 {
		t.Fatalf("check: %s", dump(ch))
	}
	want := Finding{Severity: SeverityError, Code: "ONTO-PRE-001", Check: "the API server is reachable",
		Evidence: "dial tcp 10.0.0.1:6443: connect: connection refused", Fix: "check the kubeconfig's context"}
	if ch.Findings[0] != want {
		t.Errorf("finding %+v, want %+v", ch.Findings[0], want)
	}
	if got := r.Counts(); got[SeverityError] != 1 || len(got) != 1 {
		t.Errorf("counts %v", got)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"success":false`, `"platform":"onto-system/onto"`, `"categories":[{"name":"pre","checks":[{"code":"ONTO-PRE-001"`, `"result":"fail"`, `"severity":"error"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("JSON %s lacks %s", b, s)
		}
	}
}

func TestAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30s"},
		{3*time.Minute + 10*time.Second, "3m"},
		{59*time.Minute + 50*time.Second, "1h0m"},
		{2*time.Hour + 5*time.Minute, "2h5m"},
		{47 * time.Hour, "47h0m"},
		{4*24*time.Hour + 3*time.Hour, "4d"},
	} {
		if got := age(fixedNow, fixedNow.Add(-tc.d)); got != tc.want {
			t.Errorf("age of %s: %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := age(fixedNow, time.Time{}); got != "an unknown time" {
		t.Errorf("age of the zero time: %q", got)
	}
}
