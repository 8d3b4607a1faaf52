package testcluster

import (
	"regexp"
	"strings"
	"testing"
)

func TestUniqueName(t *testing.T) {
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	tests := []struct {
		name   string
		prefix string
	}{
		{name: "short", prefix: "t"},
		{name: "Mixed_Case/and spaces", prefix: "node"},
		{name: strings.Repeat("very-long-test-name-", 10), prefix: "never-ready-image"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := UniqueName(t, tc.prefix), UniqueName(t, tc.prefix)
			for _, n := range []string{a, b} {
				if len(n) > 63 || !dns.MatchString(n) || !strings.HasPrefix(n, tc.prefix+"-") {
					t.Errorf("UniqueName = %q: not a DNS label of at most 63 characters starting with %q", n, tc.prefix+"-")
				}
			}
			if a == b {
				t.Errorf("UniqueName returned %q twice", a)
			}
		})
	}
}
