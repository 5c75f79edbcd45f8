package remotefake

import (
	"testing"
	"time"
)

// Refusals and cuts are told apart, matched by method and route prefix,
// and spent after Times hits.
func TestFaults(t *testing.T) {
	var fs Faults
	fs.Inject(Fault{Method: "POST", Path: "/command", Status: 503, Times: 2})
	fs.Inject(Fault{Path: "/command", CutAfter: 400})
	if fs.Refusal("GET", "/command") != nil || fs.Refusal("POST", "/files") != nil {
		t.Fatal("a refusal hit another method or route")
	}
	for i := range 2 {
		if f := fs.Refusal("POST", "/command/x"); f == nil || f.Status != 503 {
			t.Fatalf("hit %d: %+v", i, f)
		}
	}
	if f := fs.Refusal("POST", "/command"); f != nil {
		t.Fatalf("a refusal outlived its Times: %+v", f)
	}
	if n := fs.Cut("POST", "/command"); n != 400 {
		t.Fatalf("cut %d", n)
	}
	if n := fs.Cut("POST", "/command"); n != 0 {
		t.Fatalf("a cut outlived its one hit: %d", n)
	}
}

// The ledger counts by path prefix, on arrival and when done.
func TestLedger(t *testing.T) {
	var l Ledger
	l.Arrived("/v1/sandboxes")
	l.Arrived("/v1/sandboxes/x")
	l.Arrived("/files")
	l.Done("/v1/sandboxes", time.Now().Add(-time.Second))
	if n := l.Requests("/v1/"); n != 2 {
		t.Fatalf("requests %d", n)
	}
	if spent, n := l.Handling("/v1/"); n != 1 || spent < time.Second {
		t.Fatalf("handling %s over %d", spent, n)
	}
}
