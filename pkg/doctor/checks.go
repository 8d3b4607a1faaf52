/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

import "strings"

// All returns every check, in no particular order (Evaluate orders them).
func All() []Check {
	var all []Check
	for _, set := range [][]Check{preChecks(), platformChecks(), workloadChecks(), nodeChecks(), scalingChecks(), tlsChecks()} {
		all = append(all, set...)
	}
	return all
}

// Select keeps the checks of `doctor --pre` when pre, of the given categories when
// any, and of the given codes when any. Codes match with or without the ONTO- prefix,
// case-insensitively.
func Select(checks []Check, pre bool, categories []Category, codes []string) []Check {
	var out []Check
	for _, c := range checks {
		if pre && !c.Pre {
			continue
		}
		if len(categories) > 0 && !containsCategory(categories, c.Category) {
			continue
		}
		if len(codes) > 0 && !containsCode(codes, c.Code) {
			continue
		}
		out = append(out, c)
	}
	return out
}

func containsCategory(cats []Category, c Category) bool {
	for _, x := range cats {
		if x == c {
			return true
		}
	}
	return false
}

func containsCode(codes []string, code string) bool {
	for _, x := range codes {
		x = strings.ToUpper(x)
		if !strings.HasPrefix(x, "ONTO-") {
			x = "ONTO-" + x
		}
		if x == code {
			return true
		}
	}
	return false
}
