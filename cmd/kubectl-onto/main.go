/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command kubectl-onto is the kubectl plugin that installs, upgrades, scales, diagnoses
// and heals an OntoPlatform. kubectl finds it on PATH and runs it as `kubectl onto`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func main() {
	os.Exit(run())
}

// run is main without os.Exit, so deferred cleanups run before the process ends.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := NewCmdRoot(streams, os.Getenv)
	err := root.ExecuteContext(ctx)
	return exitCode(err, ctx.Err() != nil, streams.ErrOut)
}
