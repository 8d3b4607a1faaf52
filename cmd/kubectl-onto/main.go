/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command kubectl-onto is the kubectl plugin that installs, upgrades, scales, rolls
// back, reports on and uninstalls an OntoPlatform. kubectl finds it on PATH and runs it as `kubectl onto`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func main() {
	os.Exit(run())
}

// run is main without os.Exit, so deferred cleanups run before the process ends.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A CPU profile of the whole command, process start to exit, for the speed work:
	// in-process benchmarks leave out what a user waits for.
	if path := envValue(os.Getenv, envPrefix+"CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	// A heap profile of what the command holds. On Ctrl-C it is written before the
	// command hears of it: a watch still has its caches then (once the manager has
	// stopped, they are gone from the profile); otherwise as the command ends.
	if path := envValue(os.Getenv, envPrefix+"MEMPROFILE"); path != "" {
		var once sync.Once
		writeHeap := func() {
			once.Do(func() {
				if f, err := os.Create(path); err == nil {
					runtime.GC()
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			})
		}
		signalled := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.WithoutCancel(signalled))
		ended := make(chan struct{})
		defer func() { close(ended); writeHeap(); cancel() }()
		go func() {
			select {
			case <-signalled.Done():
				writeHeap()
				cancel()
			case <-ended:
			}
		}()
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := NewCmdRoot(streams, os.Getenv)
	return exitCode(execute(ctx, root), ctx.Err() != nil, streams.ErrOut)
}

// execute runs the command line and words an error of talking to the API server for
// the user, naming the server and kubeconfig context the command used.
func execute(ctx context.Context, root *cobra.Command) error {
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil || cmd == nil {
		return err
	}
	server, kubeContext := connectionOf(cmd.Flags())
	return explainAPIError(err, server, kubeContext)
}
