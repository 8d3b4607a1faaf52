/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package doctor

// Parsing of the server version the preflight checks compare with MinServerMinor.

import (
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// preServerMinor reads the minor of a 1.x server. Managed clusters report minors such
// as "37+"; an empty or odd minor falls back to the gitVersion (v1.37.2-gke.100).
// Both are read by apimachinery's generic version parser, which takes the leading
// numbers and ignores what follows them ("+", "-gke.100").
func preServerMinor(major, minor, gitVersion string) (int, bool) {
	if strings.TrimRight(strings.TrimSpace(major), "+") == "1" {
		if v, err := utilversion.ParseGeneric("1." + strings.TrimSpace(minor)); err == nil {
			return int(v.Minor()), true
		}
	}
	if v, err := utilversion.ParseGeneric(gitVersion); err == nil && v.Major() == 1 {
		return int(v.Minor()), true
	}
	return 0, false
}
