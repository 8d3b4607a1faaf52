/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Annotations of a lock lease naming the process that holds it, so a later run on the
// same host can tell that the holder is gone (a crash, kill -9) and take over at once
// instead of waiting out the lease.
const (
	holderHostAnnotation  = "onto.paas/holder-host"
	holderPIDAnnotation   = "onto.paas/holder-pid"
	holderStartAnnotation = "onto.paas/holder-start"
	// The kernel boot and PID namespace: a host name is not unique across
	// containers, and a PID means something only in its own namespace.
	holderBootAnnotation  = "onto.paas/holder-boot"
	holderPIDNSAnnotation = "onto.paas/holder-pidns"
)

// Process identifies a running process: host, PID and start time (the PID alone may
// have been reused), within a kernel boot and PID namespace. Start is empty where the
// system does not tell it.
type Process struct {
	Host  string
	PID   int
	Start string
	Boot  string
	PIDNS string
}

// CurrentProcess is this process.
func CurrentProcess() Process {
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	pid := os.Getpid()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	pidns, _ := os.Readlink("/proc/self/ns/pid")
	return Process{Host: host, PID: pid, Start: processStart(pid), Boot: strings.TrimSpace(string(boot)), PIDNS: pidns}
}

// ProcessStart is the start time of process pid as a lease records it; "" when the
// system does not tell it.
func ProcessStart(pid int) string { return processStart(pid) }

// processStart reads a process's start time (clock ticks since boot, field 22 of
// /proc/PID/stat); "" when it cannot (no /proc, or no such process).
func processStart(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces: count fields
	// from after its closing parenthesis.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

func (p Process) annotate(lease *coordinationv1.Lease) {
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[holderHostAnnotation] = p.Host
	lease.Annotations[holderPIDAnnotation] = strconv.Itoa(p.PID)
	lease.Annotations[holderStartAnnotation] = p.Start
	lease.Annotations[holderBootAnnotation] = p.Boot
	lease.Annotations[holderPIDNSAnnotation] = p.PIDNS
}

// holderGone reports whether lease names a process on this host (self) that no longer
// runs. Anything it cannot tell for sure (another host, no /proc, no start time
// recorded) counts as alive: only the lease's expiry frees it then.
func holderGone(lease *coordinationv1.Lease, self Process) bool {
	ann := lease.Annotations
	if self.Host == "" || ann[holderHostAnnotation] != self.Host || self.Start == "" ||
		self.Boot == "" || ann[holderBootAnnotation] != self.Boot || self.PIDNS == "" || ann[holderPIDNSAnnotation] != self.PIDNS {
		return false
	}
	pid, err := strconv.Atoi(ann[holderPIDAnnotation])
	if err != nil || pid <= 0 || ann[holderStartAnnotation] == "" {
		return false
	}
	if pid == self.PID && ann[holderStartAnnotation] == self.Start {
		return false // this very process: never take its own live lease
	}
	return processStart(pid) != ann[holderStartAnnotation]
}
