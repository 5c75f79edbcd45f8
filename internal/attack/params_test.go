package attack

import (
	"net/http"
	"strings"
	"testing"
)

// probeParams sends every GET operation malformed query parameters and
// path values, and odd headers: each answer is a 4xx or an answer the
// caller may read (the parameter ignored), never a 5xx.
func probeParams(t *testing.T, a *attack) {
	bearer := a.tok["acme-admin"]
	queries := []string{"?limit=abc", "?limit=-1", "?limit=0", "?limit=99999999999999999999", "?cursor=%00%ff", "?cursor=" + strings.Repeat("Z", 4096),
		"?since=yesterday", "?status=nope,open", "?q=" + strings.Repeat("%25", 2000), "?a=x&b=y", "?limit=1&limit=2", "?format=../../etc/passwd"}
	ids := []string{"not-an-id", "ses_", "ses_" + strings.Repeat("Z", 26), "%00", "..%2f..%2fetc", strings.Repeat("a", 8000), "ses_01M99AMXEFTN94RDARD8Q5QTV%C3%A9"}
	n := 0
	for _, o := range a.operations(t) {
		if o.method != "GET" {
			continue
		}
		paths := []string{}
		base := strings.SplitN(o.path, "?", 2)[0]
		for _, q := range queries {
			paths = append(paths, base+q)
		}
		if o.kind == "object" && strings.Contains(o.route, "{") {
			for _, id := range ids {
				p := pathParam.ReplaceAllString(o.route, id)
				paths = append(paths, p)
			}
		}
		for _, p := range paths {
			n++
			r := a.do(t, a.url(), req{method: "GET", path: p, bearer: bearer, stream: o.stream})
			if r.status >= 500 {
				t.Errorf("GET %.200s: %d: %.300s", p, r.status, r.body)
			}
			if r.status >= 400 && r.status != http.StatusRequestURITooLong {
				errorOf(t, r.body)
			}
		}
	}
	for name, h := range map[string]map[string]string{
		"a 64 KiB token":        {"Authorization": "Bearer rath_" + strings.Repeat("A", 64<<10)},
		"a bare Bearer":         {"Authorization": "Bearer"},
		"a Basic credential":    {"Authorization": "Basic YWRtaW46YWRtaW4="},
		"two credentials":       {"Authorization": "Bearer " + bearer + ", Bearer x"},
		"a Last-Event-ID of -9": {"Authorization": "Bearer " + bearer, "Last-Event-ID": "-9"},
		"a huge Last-Event-ID":  {"Authorization": "Bearer " + bearer, "Last-Event-ID": "99999999999999999999999"},
	} {
		r := a.do(t, a.url(), req{method: "GET", path: "/v1/sessions/" + a.imp + "/events", header: h, stream: true})
		if r.status >= 500 {
			t.Errorf("%s: %d: %.300s", name, r.status, r.body)
		}
		if strings.Contains(name, "Last-Event-ID") {
			if r.status != http.StatusOK || !strings.Contains(r.body, "event: live") {
				t.Errorf("%s: %d: %.300s", name, r.status, r.body)
			}
		} else if r.status != http.StatusUnauthorized && r.status != http.StatusRequestHeaderFieldsTooLarge && r.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 401: %.300s", name, r.status, r.body)
		}
	}
	if n < 100 {
		t.Errorf("only %d malformed requests", n)
	}
	t.Logf("%d malformed queries and paths", n)
}
