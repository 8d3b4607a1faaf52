/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// clientTimeout bounds each client command: a connection a NetworkPolicy drops
// would otherwise hang until the kernel gives up.
const clientTimeout = 5 * time.Second

// runClient runs a client command, for tests that exec into a pod of the image (it
// has no shell): from inside the pod's network namespace, and as the pod's
// identity to NetworkPolicies.
//
//	sample-service get URL        GET URL; the body to stdout; fails unless 2xx
//	sample-service dial HOST:PORT open a TCP connection; fails when it cannot
//
// It reports whether args named a client command.
func runClient(ctx context.Context, args []string, stdout io.Writer) (bool, error) {
	if len(args) != 2 {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	switch args[0] {
	case "get":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[1], nil)
		if err != nil {
			return true, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return true, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(stdout, resp.Body); err != nil {
			return true, err
		}
		if resp.StatusCode/100 != 2 {
			return true, fmt.Errorf("GET %s: %s", args[1], resp.Status)
		}
		return true, nil
	case "dial":
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", args[1])
		if err != nil {
			return true, err
		}
		fmt.Fprintf(stdout, "connected to %s from %s\n", conn.RemoteAddr(), conn.LocalAddr())
		return true, conn.Close()
	}
	return false, nil
}
