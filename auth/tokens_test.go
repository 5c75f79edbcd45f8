package auth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func TestTokenCreateRefuses(t *testing.T) {
	st := openStore(t, "sqlite://"+t.TempDir()+"/rath.db")
	tk := NewTokens(st)
	ctx := context.Background()
	cases := []struct {
		spec Spec
		want error
	}{
		{Spec{Grants: []string{"*"}}, ErrBadGrant},
		{Spec{Grants: []string{"run.read", "*"}}, ErrBadGrant},
		{Spec{}, ErrBadGrant},
		{Spec{Grants: []string{"run.delete"}}, ErrBadGrant},
		{Spec{Tenant: "a b", Grants: []string{"run.read"}}, ErrBadScope},
		{Spec{Project: "x/y", Grants: []string{"run.read"}}, ErrBadScope},
		{Spec{Grants: []string{"run.read"}, Expires: time.Now().Add(-time.Minute)}, ErrBadToken},
		{Spec{Name: "a\nb", Grants: []string{"run.read"}}, ErrBadToken},
	}
	for _, c := range cases {
		if _, _, err := tk.Create(ctx, c.spec); !errors.Is(err, c.want) {
			t.Errorf("Create(%+v) = %v, want %v", c.spec, err, c.want)
		}
	}
	if ts, err := tk.List(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("refused tokens were stored: %v %v", ts, err)
	}
	// With Admin, "*" is allowed, and is the default grant.
	_, info, err := tk.Create(ctx, Spec{Admin: true})
	if err != nil || len(info.Grants) != 1 || info.Grants[0] != "*" || !info.Admin {
		t.Fatalf("admin token: %+v, %v", info, err)
	}
}

func TestTokens(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		clk := newClock()
		tk := NewTokens(st, WithClock(clk.Now))

		// No token yet: loopback acts as the local principal; elsewhere a
		// credential is needed.
		p, ok, err := tk.Implicit(ctx, true)
		if err != nil || !ok || p.Kind != KindLocal || !p.Allows("token.admin") {
			t.Fatalf("implicit before the first token: %+v %v %v", p, ok, err)
		}
		if _, ok, _ := tk.Implicit(ctx, false); ok {
			t.Fatal("an implicit principal off loopback")
		}

		secret, info, err := tk.Create(ctx, Spec{Name: "ci", Tenant: "acme", Project: "web",
			Grants: []string{"run.read", "run.create", "run.read", "approval.*"}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, TokenPrefix) || len(secret) < len(TokenPrefix)+43 {
			t.Fatalf("secret %q", secret)
		}
		if got := strings.Join(info.Grants, ","); got != "approval.*,run.create,run.read" {
			t.Fatalf("grants %s", got)
		}
		// The first token closes loopback at once in this process...
		if _, ok, _ := tk.Implicit(ctx, true); ok {
			t.Fatal("implicit principal after the first token was created")
		}
		// ... and in any other that reads the store afresh.
		if _, ok, _ := NewTokens(st).Implicit(ctx, true); ok {
			t.Fatal("another process still sees no token")
		}

		p, err = tk.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != info.ID || p.Kind != KindToken || p.Name != "ci" || p.Tenant != "acme" || p.Project != "web" ||
			!p.Allows("run.create") || !p.Allows("approval.decide") || p.Allows("run.cancel") {
			t.Fatalf("principal %+v", p)
		}
		for _, bad := range []string{secret + "x", secret[:len(secret)-1], TokenPrefix, TokenPrefix + strings.Repeat("A", 43)} {
			_, err := tk.Authenticate(ctx, bad)
			if !errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrUnrecognized) {
				t.Errorf("Authenticate(%q) = %v", bad, err)
			}
		}
		if _, err := tk.Authenticate(ctx, "eyJ.eyJ.sig"); !errors.Is(err, ErrUnrecognized) {
			t.Errorf("a JWT: %v", err)
		}

		assertNoSecretStored(t, st, info.ID, secret)

		ls, err := tk.List(ctx)
		if err != nil || len(ls) != 1 || ls[0].ID != info.ID || ls[0].Tenant != "acme" {
			t.Fatalf("list %+v %v", ls, err)
		}
		raw, _ := json.Marshal(ls)
		if strings.Contains(string(raw), secret[len(TokenPrefix):]) || strings.Contains(string(raw), "sha256") {
			t.Fatalf("list shows a secret or hash: %s", raw)
		}

		// Another process has the token cached when this one revokes it:
		// it keeps working there until the cache TTL passes, no longer.
		other := NewTokens(st, WithClock(clk.Now))
		if _, err := other.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if err := tk.Revoke(ctx, info.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tk.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("revoked token works in the revoking process: %v", err)
		}
		if _, err := other.Authenticate(ctx, secret); err != nil {
			t.Fatalf("within the cache TTL: %v", err)
		}
		clk.Add(DefaultCacheTTL)
		if _, err := other.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("a revoked token works %v after: %v", DefaultCacheTTL, err)
		}
		if err := tk.Revoke(ctx, info.ID); err != nil {
			t.Fatalf("revoking twice: %v", err)
		}
		ls, _ = tk.List(ctx)
		if len(ls) != 1 || ls[0].Revoked.IsZero() {
			t.Fatalf("the revoked token lists as %+v", ls)
		}
		assertNoSecretStored(t, st, info.ID, secret)
		// No working token is left, but one was made: loopback stays
		// closed (revoking a leaked last token opens nothing).
		if _, ok, _ := tk.Implicit(ctx, true); ok {
			t.Fatal("revoking the last token opened loopback")
		}

		for _, id := range []string{"nope", string(session.New().ID())} {
			if err := tk.Revoke(ctx, id); !errors.Is(err, ErrNoToken) {
				t.Errorf("Revoke(%q) = %v", id, err)
			}
		}
	})
}

func TestTokenExpiry(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		clk := newClock()
		tk := NewTokens(st, WithClock(clk.Now))
		secret, _, err := tk.Create(ctx, Spec{Grants: []string{"run.read"}, Expires: clk.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if p, err := tk.Authenticate(ctx, secret); err != nil || p.Tenant != DefaultScope {
			t.Fatalf("%+v %v", p, err)
		}
		clk.Add(time.Hour - time.Second)
		if _, err := tk.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second) // cached or not, expiry is checked
		if _, err := tk.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("expired token: %v", err)
		}
		if some, err := NewTokens(st, WithClock(clk.Now)).Any(ctx); err != nil || !some {
			t.Fatalf("Any with only an expired token: %v %v (an expired token keeps loopback closed)", some, err)
		}
	})
}

// TestTokenCacheOff: with a zero TTL every lookup reads the store, so a
// revocation by another process applies at once.
func TestTokenCacheOff(t *testing.T) {
	st := openStore(t, "sqlite://"+t.TempDir()+"/rath.db")
	ctx := context.Background()
	a, b := NewTokens(st), NewTokens(st, WithCacheTTL(0))
	if _, ok, _ := b.Implicit(ctx, true); !ok {
		t.Fatal("no token yet")
	}
	secret, info, err := a.Create(ctx, Spec{Grants: []string{"run.*"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.Implicit(ctx, true); ok {
		t.Fatal("the first token, created elsewhere, is not seen at once with no cache")
	}
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("revoked elsewhere: %v", err)
	}
}

// assertNoSecretStored fails t if any label of the token's session, or any
// chunk of it, holds the secret or its random part.
func assertNoSecretStored(t *testing.T, st store.Store, id, secret string) {
	t.Helper()
	ctx := context.Background()
	si, err := st.Info(ctx, session.ID(id))
	if err != nil {
		t.Fatal(err)
	}
	if len(si.Labels) == 0 {
		t.Fatal("the token's session has no labels")
	}
	random := strings.TrimPrefix(secret, TokenPrefix)
	for k, v := range si.Labels {
		if strings.Contains(k, random) || strings.Contains(v, random) {
			t.Fatalf("label %s holds the secret", k)
		}
	}
	s, err := st.Load(ctx, session.ID(id))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.All() {
		raw, _ := json.Marshal(c)
		if strings.Contains(string(raw), random) {
			t.Fatal("a chunk of the token's session holds the secret")
		}
	}
}

// TestTokensConcurrent: lookups, creations and revocations from many
// goroutines at once (run with -race); a revoked token is refused by
// this process once Revoke returns.
func TestTokensConcurrent(t *testing.T) {
	st := openStore(t, "sqlite://"+t.TempDir()+"/rath.db")
	ctx := context.Background()
	tk := NewTokens(st)
	secret, info, err := tk.Create(ctx, Spec{Grants: []string{"run.read"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for range 4 {
		go func() {
			for range 50 {
				if _, err := tk.Authenticate(ctx, secret); err != nil {
					done <- err
					return
				}
				if _, err := tk.Any(ctx); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		go func() {
			_, i, err := tk.Create(ctx, Spec{Grants: []string{"run.read"}})
			if err == nil {
				err = tk.Revoke(ctx, i.ID)
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := tk.Revoke(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("after Revoke returned: %v", err)
	}
}
