package auth

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// dotted are names that look like paths: no tenant or project is named so.
var dotted = []string{".", "..", "..."}

// Every way a tenant or project name reaches a principal refuses "." and
// "..": CheckScope, a token's creation, an identity provider's claims, and
// a stored token record made before names were checked.
func TestScopeNamesRefuseDots(t *testing.T) {
	for _, s := range dotted {
		if err := CheckScope(s); !errors.Is(err, ErrBadScope) {
			t.Errorf("CheckScope(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"a.b", ".hidden", "v1..2"} {
		if err := CheckScope(s); err != nil {
			t.Errorf("CheckScope(%q): %v", s, err)
		}
	}

	ctx := context.Background()
	st := openStore(t, "sqlite://"+t.TempDir()+"/rath.db")
	tk := NewTokens(st)
	for _, s := range dotted {
		for _, spec := range []Spec{{Tenant: s, Grants: []string{"run.read"}}, {Tenant: "acme", Project: s, Grants: []string{"run.read"}}} {
			if _, _, err := tk.Create(ctx, spec); !errors.Is(err, ErrBadScope) {
				t.Errorf("Create(%+v) = %v", spec, err)
			}
		}
	}

	c := OIDCConfig{}.withDefaults()
	for _, s := range dotted {
		for _, claim := range []string{"tenant", "project"} {
			claims := map[string]any{"sub": "u", "tenant": "acme", "project": "web"}
			claims[claim] = s
			if _, err := c.principal(claims); !errors.Is(err, ErrUnauthenticated) || !errors.Is(err, ErrBadScope) {
				t.Errorf("claim %s %q: %v", claim, s, err)
			}
		}
	}

	// A record whose tenant is "..", as one made before the check could
	// be: its token does not authenticate.
	secret, info, err := tk.Create(ctx, Spec{Tenant: "acme", Grants: []string{"run.read"}})
	if err != nil {
		t.Fatal(err)
	}
	info.Tenant = ".."
	rec, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabels(ctx, session.ID(info.ID), map[string]string{LabelTokenRecord: string(rec)}); err != nil {
		t.Fatal(err)
	}
	fresh := NewTokens(st)
	if p, err := fresh.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("a token of tenant \"..\": %+v, %v", p, err)
	}
}

// A name CheckScope accepts is one the store accepts too.
func FuzzCheckScope(f *testing.F) {
	for _, s := range []string{"acme", ".", "..", "a.b", "a/b", "org:42"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckScope(name) == nil && store.CheckScopeName(name) != nil {
			t.Fatalf("%q: CheckScope accepts it, the store does not: %v", name, store.CheckScopeName(name))
		}
	})
}
