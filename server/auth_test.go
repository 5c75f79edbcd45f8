package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
)

func TestNewAddresses(t *testing.T) {
	st := openStore(t)
	for _, addr := range []string{"", "127.0.0.1:7474", "127.0.0.2:0", "localhost:0", "[::1]:7474", "app.localhost:80"} {
		if _, err := New(st, Options{Addr: addr}); err != nil {
			t.Errorf("New(%q) without a token: %v, want a loopback server", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:7474", ":7474", "[::]:7474", "192.168.1.5:7474", "example.com:80"} {
		if _, err := New(st, Options{Addr: addr}); !errors.Is(err, ErrNoToken) {
			t.Errorf("New(%q) without a token: %v, want ErrNoToken", addr, err)
		}
		if _, err := New(st, Options{Addr: addr, Token: "s3cret"}); err != nil {
			t.Errorf("New(%q) with a token: %v", addr, err)
		}
	}
	if _, err := New(st, Options{Addr: "no-port"}); err == nil {
		t.Error("New accepted an address without a port")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New accepted a nil store")
	}
}

func TestToken(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{Addr: "0.0.0.0:7474", Token: "s3cret-token"})
	url := ts.URL + "/v1/sessions/" + string(fx.root.ID())

	r := call(t, "GET", url, "")
	r.wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	for _, h := range []string{"Bearer wrong", "Bearer s3cret-token-and-more", "Bearer ", "s3cret-token", "Basic czNjcmV0LXRva2Vu", "bearer s3cret-token x"} {
		call(t, "GET", url, "", "Authorization", h).wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	}
	call(t, "GET", url, "", "Authorization", "Bearer s3cret-token").want(t, http.StatusOK, nil)
	call(t, "POST", url+"/fork", "{}", "Authorization", "Bearer wrong").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "POST", url+"/fork", "{}", "Authorization", "Bearer s3cret-token").want(t, http.StatusCreated, nil)
	// With a token the Host does not matter: the token is the guard.
	call(t, "GET", ts.URL+"/v1/sessions", "", "Authorization", "Bearer s3cret-token", "Host", "rath.example.com").want(t, http.StatusOK, nil)
	// The viewer itself holds no data and loads without the token.
	call(t, "GET", ts.URL+"/", "").want(t, http.StatusOK, nil)
}

func TestLoopbackHostOnly(t *testing.T) {
	st := openStore(t)
	seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	// A page on another site that rebinds its name to 127.0.0.1 sends its
	// own Host: refused.
	call(t, "GET", ts.URL+"/v1/sessions", "", "Host", "attacker.example:7474").wantV1Error(t, http.StatusForbidden, CodeForbidden)
	if r := call(t, "GET", ts.URL+"/", "", "Host", "attacker.example"); r.status != http.StatusForbidden {
		t.Errorf("viewer for a foreign Host: %d, want 403", r.status)
	}
	for _, host := range []string{"localhost:7474", "127.0.0.1", "[::1]:7474"} {
		call(t, "GET", ts.URL+"/v1/sessions", "", "Host", host).want(t, http.StatusOK, nil)
	}
	// A port that is not a number does not make a loopback name of a
	// foreign one.
	for _, host := range []string{"localhost:7474.attacker.example", "127.0.0.1:x", "[::1]:7474evil"} {
		call(t, "GET", ts.URL+"/v1/sessions", "", "Host", host).wantV1Error(t, http.StatusForbidden, CodeForbidden)
	}
}

func TestServeRefusesPublicListenerWithoutToken(t *testing.T) {
	st := openStore(t)
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on 0.0.0.0: %v", err)
	}
	defer l.Close()
	if err := s.Serve(context.Background(), l); !errors.Is(err, ErrNoToken) {
		t.Fatalf("Serve on %s without a token: %v, want ErrNoToken", l.Addr(), err)
	}
}
