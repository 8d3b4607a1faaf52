/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command pause is the sandbox (pause) container of the test nodes' pods: it holds
// the pod's namespaces, sleeps until SIGTERM or SIGINT, and as the pod's PID 1 (with a
// shared process namespace) reaps the zombies its orphans leave. It is what
// registry.k8s.io/pause does, built as a static Go binary instead of C.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	if os.Getpid() != 1 {
		os.Stderr.WriteString("pause: warning: not running as PID 1\n")
	}
	for sig := range sigs {
		switch sig {
		case syscall.SIGCHLD:
			reap()
		default:
			os.Exit(0)
		}
	}
}

// reap waits for every child that has exited, without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
