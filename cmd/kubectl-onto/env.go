/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import "strings"

// envPrefix starts every environment variable the plugin reads: ONTO_<COMMAND>_<FLAG>
// and ONTO_<FLAG> for flags, ONTO_RENDER_CACHE, ONTO_CPUPROFILE and ONTO_MEMPROFILE.
const envPrefix = "ONTO_"

// deprecatedEnvPrefix is the prefix ONTO_RENDER_CACHE, ONTO_CPUPROFILE and
// ONTO_MEMPROFILE had before there was one prefix; still read, after the new name.
const deprecatedEnvPrefix = "KUBECTL_" + envPrefix

// envValue reads name (ONTO_X), else its deprecated spelling KUBECTL_ONTO_X.
func envValue(getenv func(string) string, name string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return getenv(deprecatedEnvPrefix + strings.TrimPrefix(name, envPrefix))
}
