package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/openrath/rath/auth"
)

// A server that authenticates with the store's tokens (or an identity
// provider) may listen on a public address without a token of its own;
// there no request acts as the implicit local principal, loopback Host or
// not.
func TestPublicServerWithStoreTokens(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	tokens := auth.NewTokens(st)
	if _, err := New(st, Options{Addr: "0.0.0.0:7474"}); !errors.Is(err, ErrNoToken) {
		t.Fatalf("a public server that cannot authenticate: %v, want ErrNoToken", err)
	}
	for _, o := range []Options{{Addr: "0.0.0.0:7474", Tokens: tokens}, {Addr: "[::]:7474", Authenticators: []auth.Authenticator{tokens}}} {
		if _, err := New(st, o); err != nil {
			t.Fatalf("a public server with %+v: %v", o, err)
		}
	}
	s, err := New(st, Options{Addr: "0.0.0.0:0", Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on 0.0.0.0: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	base := "http://" + strings.Replace(l.Addr().String(), "0.0.0.0", "127.0.0.1", 1)
	url := base + "/v1/sessions/" + string(fx.root.ID())
	// The store holds no token yet: still nobody is let in without one.
	call(t, "GET", url, "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", url, "", "Host", "localhost").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", base+"/metrics", "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	reader, _, err := tokens.Create(ctx, auth.Spec{Name: "reader", Grants: []string{"session.read"}})
	if err != nil {
		t.Fatal(err)
	}
	scraper, _, err := tokens.Create(ctx, auth.Spec{Name: "scraper", Grants: []string{"metrics.read"}})
	if err != nil {
		t.Fatal(err)
	}
	call(t, "GET", url, "", "Authorization", "Bearer "+reader, "Host", "rath.example.com").want(t, http.StatusOK, nil)
	call(t, "GET", url, "", "Authorization", "Bearer "+scraper).wantV1Error(t, http.StatusForbidden, CodeForbidden)
	// /metrics answers to metrics.read, and to nothing else.
	call(t, "GET", base+"/metrics", "", "Authorization", "Bearer "+reader).wantV1Error(t, http.StatusForbidden, CodeForbidden)
	if r := call(t, "GET", base+"/metrics", "", "Authorization", "Bearer "+scraper); r.status != http.StatusOK || !strings.Contains(string(r.body), "rath_api_requests_total") {
		t.Fatalf("a scrape with metrics.read: %d %.200s", r.status, r.body)
	}
	// The viewer's files hold no data: a public Host loads them.
	call(t, "GET", base+"/", "", "Host", "rath.example.com").want(t, http.StatusOK, nil)
}

// On a loopback server, once the store holds a token, /metrics needs
// metrics.read as /v1 needs its grants.
func TestMetricsNeedsTheGrant(t *testing.T) {
	st := openStore(t)
	tokens := auth.NewTokens(st)
	_, ts := newTestServer(t, st, Options{Tokens: tokens})
	call(t, "GET", ts.URL+"/metrics", "").want(t, http.StatusOK, nil) // the implicit local principal
	runner, _, err := tokens.Create(context.Background(), auth.Spec{Name: "runner", Grants: []string{"run.*"}})
	if err != nil {
		t.Fatal(err)
	}
	call(t, "GET", ts.URL+"/metrics", "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", ts.URL+"/metrics", "", "Authorization", "Bearer "+runner).wantV1Error(t, http.StatusForbidden, CodeForbidden)
	admin, _, err := tokens.Create(context.Background(), auth.Spec{Name: "admin", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	call(t, "GET", ts.URL+"/metrics", "", "Authorization", "Bearer "+admin).want(t, http.StatusOK, nil)
}
