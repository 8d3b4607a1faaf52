/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/coomia-dip/kubectl-onto/internal/mustrun"
)

func TestHolderGone(t *testing.T) {
	self := CurrentProcess()
	if self.Start == "" || self.Boot == "" || self.PIDNS == "" {
		mustrun.Skipf(t, "no /proc: the holder of a lease cannot be checked here")
	}
	// A process that ran and exited: its PID names nothing now (or a new process with
	// another start time).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.ProcessState.Pid()
	parent := os.Getppid()
	lease := func(host string, pid int, start string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			holderHostAnnotation: host, holderPIDAnnotation: strconv.Itoa(pid), holderStartAnnotation: start,
			holderBootAnnotation: self.Boot, holderPIDNSAnnotation: self.PIDNS,
		}}}
	}
	inOtherPIDNamespace := lease(self.Host, dead, "12345")
	inOtherPIDNamespace.Annotations[holderPIDNSAnnotation] = "pid:[1]"
	afterReboot := lease(self.Host, dead, "12345")
	afterReboot.Annotations[holderBootAnnotation] = "another-boot"
	tests := []struct {
		name  string
		lease *coordinationv1.Lease
		want  bool
	}{
		{name: "dead process on this host", lease: lease(self.Host, dead, "12345"), want: true},
		{name: "PID reused by another process", lease: lease(self.Host, parent, "1"), want: true},
		{name: "live process on this host", lease: lease(self.Host, parent, processStart(parent))},
		{name: "this process", lease: lease(self.Host, self.PID, self.Start)},
		{name: "another host", lease: lease("elsewhere", dead, "12345")},
		{name: "another PID namespace (a container with the same host name)", lease: inOtherPIDNamespace},
		{name: "another boot", lease: afterReboot},
		{name: "no start time recorded", lease: lease(self.Host, dead, "")},
		{name: "no annotations (an older run)", lease: &coordinationv1.Lease{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := holderGone(tc.lease, self); got != tc.want {
				t.Fatalf("holderGone = %v, want %v", got, tc.want)
			}
		})
	}
}
