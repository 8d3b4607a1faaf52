/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package argocd holds the Argo CD health check of OntoPlatform: health.lua, the
// Lua script Argo CD runs to judge a platform (Healthy, Progressing or Degraded,
// as kstatus judges it for Flux), and argocd-cm-patch.yaml, the same script as a
// `resource.customizations` patch of the argocd-cm ConfigMap:
//
//	kubectl -n argocd patch configmap argocd-cm --patch-file manifests/argocd/argocd-cm-patch.yaml
//
// The patch is generated from health.lua; `go test ./manifests/argocd -update`
// rewrites it, and the tests fail when the two differ.
package argocd

import _ "embed" // for HealthScript

// HealthScript is health.lua, the Argo CD health check of OntoPlatform.
//
//go:embed health.lua
var HealthScript string

// HealthKey is the argocd-cm key Argo CD reads the health check of group onto.paas,
// kind OntoPlatform from.
const HealthKey = "resource.customizations.health.onto.paas_OntoPlatform"
