/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// connectionOf returns the API server URL and the kubeconfig context that kubectl's
// flags in flags select, for messages about a cluster that cannot be reached. The
// flags are a command's own after it ran, so they hold what the user passed and what
// ONTO_<FLAG> or the config file set. Either is "" when it cannot be resolved (no
// kubeconfig, no current context).
func connectionOf(flags *pflag.FlagSet) (server, kubeContext string) {
	cf := genericclioptions.NewConfigFlags(false)
	own := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	cf.AddFlags(own)
	// kubectl's flags that decide which API server a command talks to, and under
	// which kubeconfig context.
	for _, name := range []string{"kubeconfig", "context", "cluster", "user", "server"} {
		src, dst := flags.Lookup(name), own.Lookup(name)
		if src == nil || dst == nil || src.Value.String() == "" {
			continue
		}
		_ = dst.Value.Set(src.Value.String()) // string flags: Set cannot fail
	}
	loader := cf.ToRawKubeConfigLoader()
	if cfg, err := loader.ClientConfig(); err == nil {
		server = cfg.Host
	}
	kubeContext = *cf.Context
	if kubeContext == "" {
		if raw, err := loader.RawConfig(); err == nil {
			kubeContext = raw.CurrentContext
		}
	}
	return server, kubeContext
}
