package server

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/audit"
)

// failedAuths sends n requests with a wrong token from source ip and
// checks each is refused.
func failedAuths(t *testing.T, s *Server, n int, ip string) {
	t.Helper()
	for range n {
		req := httptest.NewRequest("GET", "http://127.0.0.1/v1/sessions", nil)
		req.RemoteAddr = net.JoinHostPort(ip, "40000")
		req.Header.Set("Authorization", "Bearer rath_wrong")
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("a wrong token: %d %s", w.Code, w.Body)
		}
	}
}

// authRecords lists the log's authentication records.
func authRecords(t *testing.T, alog *audit.Log) []audit.Record {
	t.Helper()
	recs, err := alog.List(testCtx(t), audit.Filter{Kind: audit.KindAuthentication})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// failures is how many failed authentications recs stand for, by
// source: one for a record of its own, Count for a sum.
func failures(recs []audit.Record) map[string]int64 {
	by := map[string]int64{}
	for _, r := range recs {
		by[r.Source] += max(r.Count, 1)
	}
	return by
}

// auditedServer is a server with a token of its own and an audit log.
func auditedServer(t *testing.T) (*Server, *audit.Log) {
	t.Helper()
	st := openStore(t)
	alog, err := audit.Open(testCtx(t), st, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	s, err := New(st, Options{Token: "the-servers-own", Audit: alog})
	if err != nil {
		t.Fatal(err)
	}
	return s, alog
}

// An unauthenticated client cannot grow the store without bound: 500
// failed authentications from one source are a handful of audit records,
// which still say how many failures came from where.
func TestFailedAuthenticationsAggregated(t *testing.T) {
	s, alog := auditedServer(t)
	const n = 500
	failedAuths(t, s, n, "192.0.2.7")
	if recs := authRecords(t, alog); len(recs) != authFailPerSource {
		t.Fatalf("%d failed authentications in a window wrote %d records before it closed, want %d", n, len(recs), authFailPerSource)
	}
	s.flushAuthFailed(testCtx(t)) // as at shutdown
	recs := authRecords(t, alog)
	if len(recs) != authFailPerSource+1 {
		t.Fatalf("%d failed authentications wrote %d audit records, want %d:\n%+v", n, len(recs), authFailPerSource+1, recs)
	}
	if got := failures(recs); len(got) != 1 || got["192.0.2.7"] != n {
		t.Fatalf("the records count failures by source as %v, want 192.0.2.7: %d", got, n)
	}
	if sum := recs[0]; sum.Count != n-authFailPerSource || !strings.Contains(sum.Reason, "192.0.2.7") || sum.Outcome != audit.OutcomeDenied {
		t.Fatalf("the sum: %+v", sum)
	}
	for _, r := range recs[1:] {
		if r.Count != 0 || r.RequestID == "" || r.Resource != "GET /v1/sessions" {
			t.Fatalf("a failure recorded on its own: %+v", r)
		}
	}
}

// A window's counts are written at the first failure after it; a new
// window writes its first failures again. Sources are told apart, an IPv6
// client by its /64.
func TestFailedAuthenticationsWindows(t *testing.T) {
	s, alog := auditedServer(t)
	now := time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	s.authFails.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	failedAuths(t, s, 20, "192.0.2.7")
	failedAuths(t, s, 3, "2001:db8::1")
	failedAuths(t, s, 4, "2001:db8::2")
	if recs := authRecords(t, alog); len(recs) != 2*authFailPerSource {
		t.Fatalf("%d records in the first window, want %d", len(recs), 2*authFailPerSource)
	}
	mu.Lock()
	now = now.Add(authFailWindow)
	mu.Unlock()
	failedAuths(t, s, 1, "192.0.2.7")
	recs := authRecords(t, alog)
	if len(recs) != 2*authFailPerSource+2+1 {
		t.Fatalf("%d records after the first window closed, want %d:\n%+v", len(recs), 2*authFailPerSource+3, recs)
	}
	want := map[string]int64{"192.0.2.7": 21, "2001:db8::/64": 7}
	if got := failures(recs); !maps.Equal(got, want) {
		t.Fatalf("failures by source %v, want %v", got, want)
	}
}

// Failures from more sources than a window tells apart are counted
// together: the records a window writes are bounded however many sources
// the failures come from.
func TestFailedAuthenticationsManySources(t *testing.T) {
	s, alog := auditedServer(t)
	const n = 2 * authFailSources
	for i := range n {
		failedAuths(t, s, 1, fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	s.flushAuthFailed(testCtx(t))
	recs := authRecords(t, alog)
	if limit := authFailPerWindow + authFailSources + 1; len(recs) > limit {
		t.Fatalf("failures from %d sources wrote %d records, want at most %d", n, len(recs), limit)
	}
	var total int64
	for _, c := range failures(recs) {
		total += c
	}
	if total != n || failures(recs)[authFailOther] == 0 {
		t.Fatalf("the records stand for %d failures (want %d), %d of them from other sources", total, n, failures(recs)[authFailOther])
	}
}

func TestSourceOf(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:40000":            "192.0.2.7",
		"[::ffff:192.0.2.7]:1":       "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[::1]:80":                   "::1",
		"not an address":             "unknown",
		"@":                          "unknown",
	} {
		if got := sourceOf(in); got != want {
			t.Errorf("sourceOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// Serve, shutting down, writes what the open window counted.
func TestFailedAuthenticationsCountedAtShutdown(t *testing.T) {
	s, alog := auditedServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	const n = 40
	for range n {
		call(t, "GET", "http://"+l.Addr().String()+"/v1/sessions", "", "Authorization", "Bearer rath_wrong").want(t, http.StatusUnauthorized, nil)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	recs := authRecords(t, alog)
	if got := failures(recs); len(recs) != authFailPerSource+1 || got["127.0.0.1"] != n {
		t.Fatalf("after shutdown, %d records standing for %v; want %d records standing for 127.0.0.1: %d", len(recs), got, authFailPerSource+1, n)
	}
}
