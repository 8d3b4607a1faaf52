/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package manifests compiles the project's static manifests into the binary: the
// generated CRD, the release catalog and the kustomize bases that pkg/render overlays.
package manifests

import "embed"

// FS holds crd/, releases/, profiles/ and base/. It is read-only.
//
//go:embed crd/*.yaml releases/*.yaml profiles/*.yaml base
var FS embed.FS

// CRDPath is the generated CustomResourceDefinition of OntoPlatform inside FS.
const CRDPath = "crd/onto.paas_ontoplatforms.yaml"

// ReleasesDir is the directory of the release catalog inside FS.
const ReleasesDir = "releases"

// ProfilesDir holds the starter files `init` writes, as text/template files.
const ProfilesDir = "profiles"

// BaseDir holds the kustomize bases pkg/render overlays, one directory per base.
const BaseDir = "base"
