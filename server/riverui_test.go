package server

import (
	"net/http"
	"strings"
	"testing"
)

// River's UI is served under /river/ by a server without a token, to
// loopback Hosts only; a server with a token, or without the UI, says why
// it does not serve it.
func TestRiverUIMount(t *testing.T) {
	st := openStore(t)
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("river ui at " + r.URL.Path))
	})
	_, open := newTestServer(t, st, Options{RiverUI: ui})
	if r := call(t, "GET", open.URL+"/river/jobs", ""); r.status != http.StatusOK || string(r.body) != "river ui at /river/jobs" {
		t.Fatalf("GET /river/jobs: %d %s", r.status, r.body)
	}
	if r := call(t, "GET", open.URL+"/river/", "", "Host", "attacker.example"); r.status != http.StatusForbidden {
		t.Fatalf("River's UI for a foreign Host: %d, want 403", r.status)
	}
	_, guarded := newTestServer(t, st, Options{RiverUI: ui, Token: "s3cret"})
	if r := call(t, "GET", guarded.URL+"/river/", "", "Authorization", "Bearer s3cret"); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "token") {
		t.Fatalf("River's UI on a server with a token: %d %s", r.status, r.body)
	}
	_, none := newTestServer(t, st, Options{})
	if r := call(t, "GET", none.URL+"/river/", ""); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "not served") {
		t.Fatalf("River's UI on a server without it: %d %s", r.status, r.body)
	}
}
