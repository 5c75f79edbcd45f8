package server

import (
	"net/http"
	"testing"

	"github.com/openrath/rath/auth"
)

// A store that has had a token stays closed to requests without a
// credential on loopback after its last token is revoked and gc deletes
// the token's record, until it is reopened.
func TestRevokedLastTokenAndGCKeepLoopbackClosed(t *testing.T) {
	st := openStore(t)
	ctx := testCtx(t)
	tokens := auth.NewTokens(st, auth.WithCacheTTL(0)) // as another process would, past the cache TTL
	_, ts := newTestServer(t, st, Options{Tokens: tokens})
	paths := []string{"/v1/sessions", "/metrics"}
	for _, p := range paths {
		if r := call(t, "GET", ts.URL+p, ""); r.status != http.StatusOK {
			t.Fatalf("GET %s on loopback before any token: %d %s", p, r.status, r.body)
		}
	}
	_, info, err := tokens.Create(ctx, auth.Spec{Name: "only", Grants: []string{"run.read"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tokens.Revoke(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if ls, err := tokens.List(ctx); err != nil || len(ls) != 0 {
		t.Fatalf("gc left the revoked token: %+v %v", ls, err)
	}
	for _, p := range paths {
		if r := call(t, "GET", ts.URL+p, ""); r.status != http.StatusUnauthorized {
			t.Errorf("GET %s without a credential after the last token was revoked and collected: %d", p, r.status)
		}
	}
	// Only the operator's deliberate reopen (rath token reopen) opens it.
	if err := tokens.Reopen(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if r := call(t, "GET", ts.URL+p, ""); r.status != http.StatusOK {
			t.Errorf("GET %s without a credential after the store was reopened: %d %s", p, r.status, r.body)
		}
	}
}
