package attack

import (
	"net/http"
	"strings"
	"testing"
)

// probeSurface: what answers without a credential on a server with
// tokens — the viewer, its files, the health probes, the API's contract
// — carries none of the owner's data and no server path; /metrics and
// River's UI are closed; every answer carries the headers that keep a
// page of another site from framing or sniffing it.
func probeSurface(t *testing.T, a *attack) {
	for _, c := range []struct {
		path string
		want []int
	}{
		{"/", []int{http.StatusOK}},
		{"/static/", []int{http.StatusNotFound}},
		{"/static/../openapi.json", []int{http.StatusOK, http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusNotFound}},
		{"/static/%2e%2e/%2e%2e/rath.db", []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently, http.StatusTemporaryRedirect}},
		{"/static/..%2f..%2frath.db", []int{http.StatusNotFound, http.StatusBadRequest}},
		{"/rath.db", []int{http.StatusNotFound}},
		{"/webhook.key", []int{http.StatusNotFound}},
		{"/health/live", []int{http.StatusOK}},
		{"/health/ready", []int{http.StatusOK, http.StatusServiceUnavailable}},
		{"/openapi.json", []int{http.StatusOK}},
		{"/metrics", []int{http.StatusUnauthorized}},
		{"/river/", []int{http.StatusNotFound}},
		{"/river/api/jobs?state=available", []int{http.StatusNotFound}},
		{"/v1/", []int{http.StatusUnauthorized}},
		{"/v2/sessions", []int{http.StatusNotFound}},
	} {
		r := a.do(t, a.url(), req{method: "GET", path: c.path})
		ok := false
		for _, s := range c.want {
			ok = ok || r.status == s
		}
		if !ok {
			t.Errorf("GET %s without a credential: %d, want one of %v: %.200s", c.path, r.status, c.want, r.body)
		}
		for _, s := range append(a.owned(), a.home, "SQLite format") {
			if strings.Contains(r.body, s) {
				t.Errorf("GET %s without a credential carries %q", c.path, s)
			}
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: no nosniff or frame denial: %v", c.path, r.header)
		}
	}
	// A token without metrics.read is refused /metrics; one with it reads.
	if r := a.do(t, a.url(), req{method: "GET", path: "/metrics", bearer: a.tok["acme-web"]}); r.status != http.StatusForbidden {
		t.Errorf("GET /metrics without metrics.read: %d, want 403", r.status)
	}
	if r := a.do(t, a.url(), req{method: "GET", path: "/metrics", bearer: a.tok["acme-metrics"]}); r.status != http.StatusOK {
		t.Errorf("GET /metrics with metrics.read: %d, want 200", r.status)
	}
}
