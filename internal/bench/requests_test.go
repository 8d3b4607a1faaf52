/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		method string
		url    string
		want   string
	}{
		{name: "core discovery", method: "GET", url: "/api", want: VerbDiscovery},
		{name: "group discovery", method: "GET", url: "/apis/apps/v1", want: VerbDiscovery},
		{name: "openapi", method: "GET", url: "/openapi/v3/apis/apps/v1", want: VerbDiscovery},
		{name: "namespaced get", method: "GET", url: "/apis/apps/v1/namespaces/ns/deployments/web", want: VerbGet},
		{name: "subresource get", method: "GET", url: "/apis/apps/v1/namespaces/ns/deployments/web/scale", want: VerbGet},
		{name: "namespaced list", method: "GET", url: "/api/v1/namespaces/ns/secrets?limit=500", want: VerbList},
		{name: "cluster get", method: "GET", url: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y", want: VerbGet},
		{name: "namespace get", method: "GET", url: "/api/v1/namespaces/ns", want: VerbGet},
		{name: "namespace list", method: "GET", url: "/api/v1/namespaces?labelSelector=a%3Db", want: VerbList},
		{name: "watch", method: "GET", url: "/apis/apps/v1/namespaces/ns/deployments?watch=true", want: VerbWatch},
		{name: "dry-run patch", method: "PATCH", url: "/api/v1/namespaces/ns/services/web?dryRun=All&fieldManager=m", want: VerbDryRunPatch},
		{name: "access review", method: "POST", url: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", want: VerbReview},
		{name: "patch", method: "PATCH", url: "/api/v1/namespaces/ns/services/web?fieldManager=m", want: VerbPatch},
		{name: "create", method: "POST", url: "/api/v1/namespaces/ns/secrets", want: VerbCreate},
		{name: "update", method: "PUT", url: "/apis/apps/v1/namespaces/ns/deployments/web", want: VerbUpdate},
		{name: "delete", method: "DELETE", url: "/api/v1/namespaces/ns/configmaps/c", want: VerbDelete},
		{name: "lock create", method: "POST", url: "/apis/coordination.k8s.io/v1/namespaces/ns/leases", want: VerbLock},
		{name: "lock delete", method: "DELETE", url: "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", want: VerbLock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse("https://127.0.0.1:6443" + tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := Classify(tc.method, u); got != tc.want {
				t.Errorf("Classify(%s %s) = %s, want %s", tc.method, tc.url, got, tc.want)
			}
		})
	}
}

func TestParseKubectlLog(t *testing.T) {
	log := `I1130 04:39:30.520944   13270 cert_rotation.go:141] "Starting client certificate rotation controller" logger="tls-transport-cache"
I1130 04:39:30.529345   13270 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:7443/api?timeout=32s" status="200 OK" milliseconds=5
I1130 04:39:30.529345   13270 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:7443/api/v1/namespaces/default" status="200 OK" milliseconds=5
I1130 04:39:30.529345   13270 round_trippers.go:632] "Response" verb="PATCH" url="https://127.0.0.1:7443/api/v1/namespaces/default/services/a?dryRun=All&fieldManager=kubectl-onto" status="200 OK" milliseconds=5
I1130 04:39:30.529345   13270 round_trippers.go:632] "Response" verb="PATCH" url="https://127.0.0.1:7443/api/v1/namespaces/default/services/a?fieldManager=kubectl-onto&force=false" status="200 OK" milliseconds=5
`
	got, err := ParseKubectlLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{VerbDiscovery: 1, VerbGet: 1, VerbDryRunPatch: 1, VerbPatch: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseKubectlLog (-want +got):\n%s", diff)
	}
}
