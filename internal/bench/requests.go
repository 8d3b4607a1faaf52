/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Request classes, by what a request does rather than its HTTP method: a GET is a
// GET of one object, a LIST of a collection, a WATCH, or DISCOVERY (the API groups and
// OpenAPI documents clients read before anything else).
const (
	VerbGet       = "GET"
	VerbList      = "LIST"
	VerbWatch     = "WATCH"
	VerbDiscovery = "DISCOVERY"
	VerbPatch     = "PATCH"
	// VerbDryRunPatch is a PATCH with dryRun=All: it asks, it writes nothing.
	VerbDryRunPatch = "PATCH(dry-run)"
	VerbCreate      = "CREATE"
	VerbUpdate      = "UPDATE"
	VerbDelete      = "DELETE"
	// VerbLock is any request on the run's lock lease (coordination.k8s.io): kept
	// apart, as it is not a write to the platform.
	VerbLock = "LOCK"
	// VerbReview is an access review (SelfSubjectAccessReview, ...): a POST that
	// asks the authorizer and stores nothing.
	VerbReview = "REVIEW"
)

// Verbs lists the request classes in the order tables show them.
func Verbs() []string {
	return []string{VerbDiscovery, VerbGet, VerbList, VerbWatch, VerbDryRunPatch, VerbPatch, VerbCreate, VerbUpdate, VerbDelete, VerbLock, VerbReview}
}

// Counts is the number of API requests by class (Verbs).
type Counts map[string]int

// Total is the number of requests of every class.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Writes is the number of requests that may change the platform's objects (not
// GET/LIST/WATCH/DISCOVERY, not dry-run, not the lock lease).
func (c Counts) Writes() int {
	return c[VerbPatch] + c[VerbCreate] + c[VerbUpdate] + c[VerbDelete]
}

// String is "N requests: GET 3, LIST 12, ..." in the order of Verbs.
func (c Counts) String() string {
	var parts []string
	for _, v := range Verbs() {
		if c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, c[v]))
		}
	}
	for _, v := range slices.Sorted(maps.Keys(c)) {
		if !slices.Contains(Verbs(), v) && c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, c[v]))
		}
	}
	return fmt.Sprintf("%d requests: %s", c.Total(), strings.Join(parts, ", "))
}

// Classify names the class of a request to the API server from its method and URL.
func Classify(method string, u *url.URL) string {
	q := u.Query()
	if strings.HasPrefix(u.Path, "/apis/coordination.k8s.io/") {
		return VerbLock
	}
	if method == http.MethodPost && strings.HasPrefix(u.Path, "/apis/authorization.k8s.io/") {
		return VerbReview
	}
	switch method {
	case http.MethodGet:
		if q.Get("watch") == "true" || q.Get("watch") == "1" {
			return VerbWatch
		}
		named, ok := namesObject(u.Path)
		switch {
		case !ok:
			return VerbDiscovery
		case named:
			return VerbGet
		default:
			return VerbList
		}
	case http.MethodPatch:
		if q.Has("dryRun") {
			return VerbDryRunPatch
		}
		return VerbPatch
	case http.MethodPost:
		if q.Has("dryRun") {
			return "CREATE(dry-run)"
		}
		return VerbCreate
	case http.MethodPut:
		return VerbUpdate
	case http.MethodDelete:
		return VerbDelete
	}
	return method
}

// namesObject reports whether path is a resource path naming one object (or its
// subresource); ok is false for paths that are not resource paths (discovery, OpenAPI,
// version).
func namesObject(path string) (named, ok bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		rest = segs[3:]
	default:
		return false, false
	}
	switch {
	case len(rest) == 0:
		return false, false
	case rest[0] == "namespaces" && len(rest) >= 3:
		return len(rest) >= 4, true // namespaces/NS/RESOURCE[/NAME...]
	default:
		return len(rest) >= 2, true // RESOURCE[/NAME...], namespaces[/NAME]
	}
}

// Counter counts the requests of the transports it wraps, by class. Install it on a
// rest.Config with Config.Wrap(counter.Wrap).
type Counter struct {
	mu     sync.Mutex
	counts Counts
}

// NewCounter returns a Counter at zero.
func NewCounter() *Counter { return &Counter{counts: Counts{}} }

// Wrap returns a transport that counts each request and passes it on to rt.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.add(Classify(r.Method, r.URL))
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *Counter) add(verb string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[verb]++
}

// Take returns the counts so far and starts again from zero.
func (c *Counter) Take() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = Counts{}
	return out
}

// kubectlResponse matches the line kubectl -v=6 logs for each request:
//
//	I1130 04:39:30.529345 13270 round_trippers.go:632] "Response" verb="GET" url="https://..." status="200 OK" milliseconds=5
var kubectlResponse = regexp.MustCompile(`"Response" verb="([A-Z]+)" url="([^"]+)"`)

// ParseKubectlLog counts the requests in kubectl's -v=6 log.
func ParseKubectlLog(r io.Reader) (Counts, error) {
	out := Counts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		m := kubectlResponse.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		u, err := url.Parse(m[2])
		if err != nil {
			return nil, fmt.Errorf("kubectl log: %w", err)
		}
		out[Classify(m[1], u)]++
	}
	return out, sc.Err()
}
