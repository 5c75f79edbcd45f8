package server

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// A page of another site cannot change anything through River's UI on a
// token-less loopback server: its POSTs (text/plain, as River's own page
// sends them) are refused when Origin or Sec-Fetch-Site says they came
// from elsewhere, and reach River when they came from the server's own
// page or from a client that is no browser.
func TestRiverUIRefusesCrossSitePosts(t *testing.T) {
	st := openStore(t)
	var reached atomic.Int64
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte("ok"))
	})
	_, srv := newTestServer(t, st, Options{RiverUI: ui})
	for _, op := range []string{"delete", "cancel", "retry"} {
		url := srv.URL + "/river/api/jobs/" + op
		for _, h := range [][]string{
			{"Content-Type", "text/plain", "Origin", "http://attacker.example"},
			{"Content-Type", "text/plain", "Sec-Fetch-Site", "cross-site"},
			{"Content-Type", "text/plain", "Sec-Fetch-Site", "same-site", "Origin", "http://sub.localhost"},
			{"Content-Type", "application/json", "Origin", "null"},
		} {
			before := reached.Load()
			if r := call(t, "POST", url, "", h...); r.status != http.StatusForbidden {
				t.Errorf("POST %s %v: %d %s, want 403", url, h, r.status, r.body)
			}
			if reached.Load() != before {
				t.Errorf("POST %s %v reached River", url, h)
			}
		}
		for _, h := range [][]string{
			{"Content-Type", "text/plain", "Origin", srv.URL},
			{"Content-Type", "text/plain", "Sec-Fetch-Site", "same-origin", "Origin", srv.URL},
			{"Content-Type", "text/plain"}, // no browser: curl
		} {
			before := reached.Load()
			if r := call(t, "POST", url, `{"ids":["1"]}`, h...); r.status != http.StatusOK {
				t.Errorf("POST %s %v: %d %s, want 200", url, h, r.status, r.body)
			}
			if reached.Load() != before+1 {
				t.Errorf("POST %s %v did not reach River", url, h)
			}
		}
	}
	// Reading stays open to the page of the UI itself.
	if r := call(t, "GET", srv.URL+"/river/api/jobs", "", "Sec-Fetch-Site", "cross-site"); r.status != http.StatusOK {
		t.Errorf("GET with Sec-Fetch-Site cross-site: %d", r.status)
	}
}

// /v1 refuses a cross-site write too, with its JSON error, whatever the
// body's type.
func TestV1RefusesCrossSiteWrites(t *testing.T) {
	st := openStore(t)
	_, srv := newTestServer(t, st, Options{})
	r := call(t, "POST", srv.URL+"/v1/runs", `{"workflow":"hello","input":"hi"}`, "Origin", "http://attacker.example")
	var e v1Error
	r.want(t, http.StatusForbidden, &e)
	if e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not /v1's error shape: %s", r.body)
	}
}
