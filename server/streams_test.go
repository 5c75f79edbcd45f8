package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// One tenant, or one of its tokens, cannot hold every event stream: past
// a principal's limit, a tenant's, or the server's, a stream is 429 naming
// which, and a stream that ends makes its room again.
func TestStreamLimits(t *testing.T) {
	st := openStore(t)
	ctx := testCtx(t)
	tokens := auth.NewTokens(st)
	srv, ts := newTestServer(t, st, Options{Tokens: tokens, MaxSubscribers: 6, MaxSubscribersPerTenant: 4, MaxSubscribersPerPrincipal: 2})
	urls := map[string]string{}
	for _, tenant := range []string{"acme", "globex"} {
		s := session.FromUser("the stream of " + tenant)
		if err := st.Commit(store.WithCreateScope(ctx, store.Scope{Tenant: tenant, Project: "web"}), s, ""); err != nil {
			t.Fatal(err)
		}
		urls[tenant] = ts.URL + "/v1/sessions/" + string(s.ID()) + "/events"
	}
	token := func(tenant string) string {
		secret, _, err := tokens.Create(ctx, auth.Spec{Tenant: tenant, Grants: []string{"session.read"}})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	a1, a2, a3 := token("acme"), token("acme"), token("acme")
	g1, g2, g3 := token("globex"), token("globex"), token("globex")

	open := func(tenant, bearer, want string) func() {
		t.Helper()
		rctx, cancel := context.WithCancel(ctx)
		req, err := http.NewRequestWithContext(rctx, "GET", urls[tenant], nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			if res.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(res.Body)
				t.Fatalf("a stream of %s: %d %s", tenant, res.StatusCode, b)
			}
			return func() { cancel(); res.Body.Close() }
		}
		defer cancel()
		defer res.Body.Close()
		var e v1Error
		if err := json.NewDecoder(res.Body).Decode(&e); err != nil || res.StatusCode != http.StatusTooManyRequests || e.Error.Reason != want {
			t.Fatalf("a stream of %s past %s: %d %+v %v", tenant, want, res.StatusCode, e, err)
		}
		return nil
	}
	stopA1 := open("acme", a1, "")
	defer open("acme", a1, "")()
	open("acme", a1, "streams_principal")
	defer open("acme", a2, "")()
	defer open("acme", a2, "")()
	open("acme", a3, "streams_tenant") // acme holds 4
	defer open("globex", g1, "")()
	defer open("globex", g2, "")() // the server holds 6
	open("globex", g3, "streams_server")

	stopA1()
	deadline := time.Now().Add(10 * time.Second)
	for srv.subscribers.Load() > 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	defer open("acme", a3, "")() // room made in acme, and on the server
}
