package attack

import (
	"net/http"
	"strings"
	"testing"
)

// probeFailedAuthAudit: every 401 the servers answered is in the audit
// log, but in few records — per source and minute, the first few on
// their own and the rest counted — so a client without a credential
// cannot grow the store by sending requests.
func probeFailedAuthAudit(t *testing.T, a *attack) {
	// More failures from one source than any window writes one by one.
	srv := a.serve(t)
	defer srv.kill()
	for i := 0; i < 200; i++ {
		if r := a.do(t, srv.url, req{method: "GET", path: "/v1/runs", bearer: "rath_forged" + strings.Repeat("x", i%7)}); r.status != http.StatusUnauthorized {
			t.Fatalf("a forged token: %d", r.status)
		}
	}
	srv.stop(t) // its shutdown writes what it counted
	var recs []struct {
		Outcome, Source string
		Count           int
	}
	decode(t, a.mustCLI(t, "--json", "audit", "ls", "--kind", "authentication", "--since", "24h", "--limit", "1000000"), &recs)
	n, sum := 0, 0
	for _, r := range recs {
		if r.Outcome != "denied" {
			continue
		}
		n++
		sum += max(r.Count, 1)
	}
	failed := a.count(http.StatusUnauthorized)
	if sum != failed {
		t.Errorf("the audit log counts %d failed authentications in %d records; the servers answered %d 401s", sum, n, failed)
	}
	// Four servers, a few minutes: at most a few windows each, of 5
	// records and one sum per source.
	if n > 60 || n*4 > failed {
		t.Errorf("%d failed authentications wrote %d audit records", failed, n)
	}
	t.Logf("%d failed authentications, %d audit records", failed, n)
}
