package attack

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// probeDNSRebinding: a page whose name was rebound to 127.0.0.1 sends its
// own Host; a server whose loopback requests act as the local principal
// answers none of them, on any route, while loopback names pass.
func probeDNSRebinding(t *testing.T, a *attack) {
	port := a.url()[strings.LastIndex(a.url(), ":")+1:]
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example:" + port,
		"localhost.evil.example", "localhost:" + port + ".evil.example", "0x7f000001:" + port, "2130706433", "10.0.0.1:" + port,
		"[fe80::1]:" + port, "rath.internal"} {
		for _, path := range []string{"/v1/sessions", "/v1/runs", "/", "/metrics", "/openapi.json", "/health/ready", "/river/"} {
			r := a.do(t, a.url(), req{method: "GET", path: path, header: map[string]string{"Host": host}})
			if r.status != http.StatusForbidden {
				t.Errorf("Host %q: GET %s: %d, want 403: %.200s", host, path, r.status, r.body)
			}
		}
		r := a.do(t, a.url(), req{method: "POST", path: "/v1/runs", header: map[string]string{"Host": host},
			body: `{"workflow":"cluster","input":"{\"steps\":1}"}`})
		if r.status != http.StatusForbidden {
			t.Errorf("Host %q: POST /v1/runs: %d, want 403: %.200s", host, r.status, r.body)
		}
	}
	// The same requests under loopback names are answered: the probe
	// can fail.
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST.:" + port, "app.localhost:" + port} {
		if r := a.do(t, a.url(), req{method: "GET", path: "/v1/sessions", header: map[string]string{"Host": host}}); r.status != http.StatusOK {
			t.Errorf("Host %q: GET /v1/sessions: %d, want 200: %.200s", host, r.status, r.body)
		}
	}
}

// probeCrossOriginV1: a page of another site cannot make a browser write
// through /v1 — no form content type is admitted, and a JSON request the
// browser marks as cross-site is refused — and nothing it sent was
// acted on; the same request from a client that is no browser is.
func probeCrossOriginV1(t *testing.T, a *attack) {
	body := `{"workflow":"cluster","input":"{\"steps\":1,\"latency_ms\":1,\"idempotent\":true}"}`
	runs := func() int {
		var page struct{ Items []struct{ ID string } }
		decode(t, a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/runs?limit=200"}), &page)
		return len(page.Items)
	}
	before := runs()
	for _, c := range []struct {
		name   string
		q      req
		status int
	}{
		{"text/plain form", req{ctype: "text/plain"}, http.StatusUnsupportedMediaType},
		{"urlencoded form", req{ctype: "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"multipart form", req{ctype: "multipart/form-data; boundary=x"}, http.StatusUnsupportedMediaType},
		{"no content type", req{ctype: " "}, http.StatusUnsupportedMediaType},
		{"json cross-site", req{header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
		{"json same-site", req{header: map[string]string{"Sec-Fetch-Site": "same-site"}}, http.StatusForbidden},
		{"json foreign origin", req{header: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden},
		{"text/plain cross-site", req{ctype: "text/plain", header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}}, http.StatusForbidden},
	} {
		q := c.q
		q.method, q.path, q.body = "POST", "/v1/runs", body
		if r := a.do(t, a.url(), q); r.status != c.status {
			t.Errorf("%s: POST /v1/runs: %d, want %d: %.300s", c.name, r.status, c.status, r.body)
		} else {
			errorOf(t, r.body)
		}
	}
	for _, path := range []string{"/v1/schedules/x", "/v1/webhooks/ses_01M99AMXEFTN94RDARD8Q5QTVW"} {
		r := a.do(t, a.url(), req{method: "DELETE", path: path, header: map[string]string{"Sec-Fetch-Site": "cross-site"}})
		if r.status != http.StatusForbidden {
			t.Errorf("DELETE %s cross-site: %d, want 403: %.300s", path, r.status, r.body)
		}
	}
	if after := runs(); after != before {
		t.Errorf("refused cross-site POSTs made %d runs", after-before)
	}
	// A client that is no browser, and the page of this origin, pass.
	for _, h := range []map[string]string{nil, {"Sec-Fetch-Site": "same-origin"}, {"Origin": a.url()}} {
		a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/runs", body: body, header: h})
	}
}

// probeCrossOriginRiver: River's UI posts text/plain from its own page,
// so only the origin check stops a page of another site from deleting,
// cancelling or retrying jobs through it.
func probeCrossOriginRiver(t *testing.T, a *attack) {
	if r := a.do(t, a.url(), req{method: "GET", path: "/river/"}); r.status != http.StatusOK {
		t.Fatalf("River's UI is not served on a token-less loopback server: %d %.200s", r.status, r.body)
	}
	u, _ := url.Parse(a.url())
	for _, op := range []string{"delete", "cancel", "retry"} {
		path := "/river/api/jobs/" + op
		for _, h := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "same-site"},
			{"Origin": "https://evil.example"},
			{"Origin": "http://" + u.Hostname() + ".evil.example"},
			{"Origin": "null"},
		} {
			r := a.do(t, a.url(), req{method: "POST", path: path, ctype: "text/plain;charset=UTF-8", body: `{"job_ids":[1]}`, header: h})
			if r.status != http.StatusForbidden {
				t.Errorf("POST %s with %v: %d, want 403: %.200s", path, h, r.status, r.body)
			}
		}
		// River's own page (same origin) is not refused by the check.
		r := a.do(t, a.url(), req{method: "POST", path: path, ctype: "text/plain;charset=UTF-8", body: `{"job_ids":[1]}`,
			header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": a.url()}})
		if r.status == http.StatusForbidden {
			t.Errorf("POST %s from River's own page: 403: %.200s", path, r.body)
		}
	}
}
