package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestBearerToken(t *testing.T) {
	cases := map[string]string{
		"Bearer abc":        "abc",
		"bearer abc":        "abc",
		"BEARER   abc  ":    "abc",
		"  Bearer rath_x-y": "rath_x-y",
		"Bearer":            "",
		"Bearer ":           "",
		"Basic abc":         "",
		"abc":               "",
		"Bearer a b":        "",
		"":                  "",
	}
	for h, want := range cases {
		got, ok := BearerToken(h)
		if got != want || ok != (want != "") {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", h, got, ok, want)
		}
	}
}

// fixed recognizes one credential.
type fixed struct {
	cred string
	p    Principal
}

func (f fixed) Authenticate(_ context.Context, bearer string) (Principal, error) {
	if bearer != f.cred {
		return Principal{}, ErrUnrecognized
	}
	return f.p, nil
}

// refuser recognizes everything and refuses it.
type refuser struct{}

func (refuser) Authenticate(context.Context, string) (Principal, error) {
	return Principal{}, fmt.Errorf("%w: refused", ErrUnauthenticated)
}

func TestChain(t *testing.T) {
	ctx := context.Background()
	a := fixed{"a", Principal{ID: "A"}}
	b := fixed{"b", Principal{ID: "B"}}
	c := Chain(a, b)
	for cred, want := range map[string]string{"a": "A", "b": "B"} {
		p, err := c.Authenticate(ctx, cred)
		if err != nil || p.ID != want {
			t.Errorf("%q: %+v, %v", cred, p, err)
		}
	}
	for _, cred := range []string{"", "c"} {
		if _, err := c.Authenticate(ctx, cred); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%q: %v", cred, err)
		}
	}
	// The first that recognizes decides: a refusal is not passed on.
	if _, err := Chain(refuser{}, a).Authenticate(ctx, "a"); err == nil || errors.Is(err, ErrUnrecognized) {
		t.Errorf("a refusal fell through: %v", err)
	}
	if _, err := Chain().Authenticate(ctx, "a"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("empty chain: %v", err)
	}
}

func TestStatic(t *testing.T) {
	ctx := context.Background()
	s := Static("s3cret", Principal{Tenant: "default", Grants: []string{"*"}})
	p, err := s.Authenticate(ctx, "s3cret")
	if err != nil || p.Kind != KindStatic || p.ID != "static" || !p.Allows("token.admin") {
		t.Fatalf("%+v, %v", p, err)
	}
	p.Grants[0] = "run.read" // the caller's copy
	if p2, _ := s.Authenticate(ctx, "s3cret"); p2.Grants[0] != "*" {
		t.Fatal("a caller changed the static principal's grants")
	}
	for _, bad := range []string{"s3cre", "s3cret ", "S3CRET", ""} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, ErrUnrecognized) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestLocal(t *testing.T) {
	p := Local()
	if p.Kind != KindLocal || p.Tenant != "default" || p.Project != "default" || !p.Allows("token.admin") {
		t.Fatalf("%+v", p)
	}
}
