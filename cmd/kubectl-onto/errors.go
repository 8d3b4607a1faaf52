/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitFailure = 1
	// exitChanges is `plan --detailed-exitcode` when the plan has changes.
	exitChanges = 2
)

// ExitError carries a process exit code up to main. Commands return it instead of
// calling os.Exit, so deferred cleanups run and tests can assert the code.
type ExitError struct {
	Code int
	// Err is printed by main unless Silent; it may be nil for a bare exit code.
	Err error
	// Silent means the command already reported the failure (e.g. validation issues
	// printed as a result) and main should print nothing more.
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// exitInterrupted is the exit code of a run stopped by Ctrl-C or SIGTERM, as a shell
// reports a process killed by SIGINT (128+2).
const exitInterrupted = 130

// exitCode prints err the way kubectl does ("error: ...") and maps it to an exit code.
// interrupted says the run was stopped by a signal: the error is then a consequence
// ("context canceled"), and the user is told what state the run left instead.
func exitCode(err error, interrupted bool, errOut io.Writer) int {
	if err == nil {
		return exitOK
	}
	if interrupted && errors.Is(err, context.Canceled) {
		fmt.Fprintln(errOut, "interrupted: the run stopped where it was; what it finished is in place and, for apply, recorded in the platform's status; run the same command again to continue")
		return exitInterrupted
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if !exit.Silent && exit.Err != nil {
			fmt.Fprintf(errOut, "error: %v\n", exit.Err)
		}
		return exit.Code
	}
	fmt.Fprintf(errOut, "error: %v\n", err)
	return exitFailure
}
