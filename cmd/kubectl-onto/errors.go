/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/coomia-dip/kubectl-onto/pkg/apply"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
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

// explainedError is an error reworded for the user; it still unwraps to the original,
// so errors.Is and errors.As (context.Canceled, ExitError) see through it.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }

// connectionHint is what to check when the API server cannot be reached.
const connectionHint = "check --kubeconfig and --context, or that the cluster is running"

// permissionsHint points at the RBAC each command needs.
const permissionsHint = "see " + buildinfo.DocsURL + "/permissions.md"

// explainAPIError rewords the errors of talking to the API server that Go and
// client-go word for programmers: a server that cannot be reached becomes one line
// naming the server and the kubeconfig context (server and kubeContext, from the
// command's flags) with what to check, after the plane and object a run was writing
// when it failed (an apply.ApplyError) and the retry budget it spent; an RBAC refusal
// names the user, verb, resource and namespace. Other errors are returned unchanged.
// An ExitError keeps its code.
func explainAPIError(err error, server, kubeContext string) error {
	if err == nil {
		return nil
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err == nil || exit.Silent {
			return err
		}
		return &ExitError{Code: exit.Code, Err: explainAPIError(exit.Err, server, kubeContext), Silent: exit.Silent}
	}
	if cause := unreachableCause(err); cause != "" {
		if server == "" {
			server = requestServer(err)
		}
		where := "the Kubernetes API server"
		if server != "" {
			where += " at " + server
		}
		if kubeContext != "" {
			where += fmt.Sprintf(" (context %q)", kubeContext)
		}
		msg := fmt.Sprintf("cannot reach %s: %s", where, cause)
		// Mid-run, what the run was doing and how long it retried matter as much.
		var spent *apply.BudgetSpentError
		if errors.As(err, &spent) {
			msg += fmt.Sprintf(", for the whole retry budget (%s)", spent.Budget)
		}
		var during *apply.ApplyError
		if errors.As(err, &during) {
			msg = (&apply.ApplyError{Plane: during.Plane, Object: during.Object, Err: errors.New(msg)}).Error()
		}
		return &explainedError{msg: msg + "; " + connectionHint, err: err}
	}
	if msg, ok := forbiddenMessage(err); ok {
		return &explainedError{msg: msg, err: err}
	}
	return err
}

// unreachableCause says in words why no request reached the API server, or "" when
// err is not such an error. It reads the error chain client-go keeps (url.Error around
// the net and TLS errors) and, where a caller flattened it with %v, the text.
func unreachableCause(err error) string {
	var (
		dnsErr    *net.DNSError
		opErr     *net.OpError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		verifyErr *tls.CertificateVerificationError
		recordErr tls.RecordHeaderError
		alertErr  tls.AlertError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network is unreachable"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return fmt.Sprintf("no such host %q", dnsErr.Name)
		}
		return fmt.Sprintf("cannot resolve host %q: %s", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &opErr) && opErr.Op == "dial" && opErr.Timeout():
		return "timed out connecting"
	case errors.As(err, &unknownCA):
		return "TLS handshake failed: " + unknownCA.Error()
	case errors.As(err, &hostErr):
		return "TLS handshake failed: " + hostErr.Error()
	case errors.As(err, &invalid):
		return "TLS handshake failed: " + invalid.Error()
	case errors.As(err, &verifyErr):
		return "TLS handshake failed: " + verifyErr.Err.Error()
	case errors.As(err, &recordErr):
		return "TLS handshake failed: the server does not speak TLS"
	case errors.As(err, &alertErr):
		return "TLS handshake failed: the server refused it: " + alertErr.Error()
	}
	// Errors that reached us as text only. An answer of the API server is not one:
	// the server was reached, and a webhook it could not call is its own problem.
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return ""
	}
	msg := err.Error()
	for _, m := range []struct{ text, cause string }{
		{"connect: connection refused", "connection refused"},
		{": no such host", "no such host"},
		{"x509: certificate signed by unknown authority", "TLS handshake failed: x509: certificate signed by unknown authority"},
		{"TLS handshake timeout", "TLS handshake timed out"},
		// net/http's own wording of a tls.RecordHeaderError that looks like HTTP.
		{"server gave HTTP response to HTTPS client", "TLS handshake failed: the server answered in plain HTTP, not TLS"},
	} {
		if strings.Contains(msg, m.text) && strings.Contains(msg, "://") {
			return m.cause
		}
	}
	return ""
}

// requestServer is the scheme and host of the request err is about, when the
// kubeconfig could not tell: client-go's errors carry the URL they failed on.
func requestServer(err error) string {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		return ""
	}
	u, perr := url.Parse(urlErr.URL)
	if perr != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// forbiddenMessage words an RBAC refusal: `forbidden: user "jane" cannot list resource
// "leases" (coordination.k8s.io) in namespace "onto-system" (needed to <what the
// command was doing>); see <DocsURL>/permissions.md`. It reports false for anything
// else, including other 403s (an exhausted ResourceQuota, an admission webhook),
// whose server message already says what is wrong and is printed as it is.
func forbiddenMessage(err error) (string, bool) {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return "", false
	}
	serverMsg := status.Status().Message
	// The API server's RBAC refusal (k8s.io/apiserver's forbidden message with the
	// RBAC authorizer's reason): who cannot do what, where, and why.
	rbacDenied := regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]*)"(?: in API group "([^"]*)")?( in the namespace "[^"]*"| at the cluster scope)?(?:: (.*))?$`)
	m := rbacDenied.FindStringSubmatch(serverMsg)
	if m == nil {
		return "", false
	}
	user, verb, resource, group, scope, reason := m[1], m[2], m[3], m[4], m[5], m[6]
	var b strings.Builder
	fmt.Fprintf(&b, "forbidden: user %q cannot %s resource %q", user, verb, resource)
	if group != "" {
		fmt.Fprintf(&b, " (%s)", group)
	}
	switch {
	case strings.HasPrefix(scope, " in the namespace "):
		b.WriteString(" in namespace " + strings.TrimPrefix(scope, " in the namespace "))
	case scope != "":
		b.WriteString(" at the cluster scope")
	}
	// What the command was doing: the context its callers wrapped around the
	// server's message.
	if full := err.Error(); strings.HasSuffix(full, serverMsg) {
		if doing := strings.TrimSuffix(strings.TrimSuffix(full, serverMsg), ": "); doing != "" {
			fmt.Fprintf(&b, " (needed to %s)", doing)
		}
	}
	if reason != "" {
		b.WriteString(": " + reason)
	}
	b.WriteString("; " + permissionsHint)
	return b.String(), true
}
