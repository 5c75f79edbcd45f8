package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// metricValue is the value of the sample line that starts with series.
func metricValue(t *testing.T, text, series string) string {
	t.Helper()
	for line := range strings.SplitSeq(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return rest
		}
	}
	return ""
}

func TestMetrics(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	for range 3 {
		call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.root.ID()), "").want(t, http.StatusOK, nil)
	}
	call(t, "GET", ts.URL+"/v1/sessions/"+string(session.NewID()), "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	_, stop := openEvents(t, ts.URL+"/v1/sessions/"+string(fx.root.ID())+"/events", "")
	defer stop()
	var text string
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := call(t, "GET", ts.URL+"/metrics", "")
		if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/plain") {
			t.Fatalf("GET /metrics: %d %q", res.status, res.header.Get("Content-Type"))
		}
		text = string(res.body)
		if metricValue(t, text, "rath_api_event_streams") == "1" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for series, want := range map[string]string{
		`rath_api_requests_total{code="200",operation="GET /v1/sessions/{id}"}`: "3",
		`rath_api_requests_total{code="404",operation="GET /v1/sessions/{id}"}`: "1",
		`rath_api_request_seconds_count{operation="GET /v1/sessions/{id}"}`:     "4",
		`rath_api_event_streams`:       "1",
		`rath_api_event_streams_limit`: "1000",
	} {
		if got := metricValue(t, text, series); got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
	if !strings.Contains(text, "go_goroutines") || !strings.Contains(text, "process_resident_memory_bytes") {
		t.Error("no runtime or process metrics")
	}
	// A server with a token is scraped with it.
	_, tts := newTestServer(t, st, Options{Token: "s3cret"})
	call(t, "GET", tts.URL+"/metrics", "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	if res := call(t, "GET", tts.URL+"/metrics", "", "Authorization", "Bearer s3cret"); res.status != http.StatusOK {
		t.Fatalf("a scrape with the token: %d", res.status)
	}
}
