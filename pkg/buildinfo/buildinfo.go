/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package buildinfo reports the version of this build of kubectl-onto.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version is set at link time by the Makefile (-X ...buildinfo.Version=...). It is a
// variable only because the linker can set nothing else; nothing assigns it at run time.
var Version = ""

// Info describes this build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns this build's version: the linker's, else the module version that
// `go install` recorded, else "dev".
func Get() Info {
	v := Version
	if v == "" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			v = "dev"
		}
	}
	return Info{Version: v, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}
