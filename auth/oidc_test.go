package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/openrath/rath/auth/authtest"
)

// The in-test OpenID provider and keys are authtest's.
type (
	issuer     = authtest.Issuer
	signingKey = authtest.Key
)

func newIssuer(t *testing.T, pub ...jose.JSONWebKey) *issuer { return authtest.NewIssuer(t, pub...) }

func newKey(t testing.TB, kid string) signingKey { return authtest.NewKey(t, kid) }

const audience = "rath-api"

func claimsFor(is *issuer) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": is.URL(), "aud": audience, "sub": "user-42", "email": "ann@example.com",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"tenant": "acme", "project": "web", "grants": []string{"run.read", "run.create", "openid", "run.read"},
	}
}

func with(c map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range c {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func TestOIDC(t *testing.T) {
	ctx := context.Background()
	k1 := newKey(t, "k1")
	is := newIssuer(t, k1.Public())
	o, err := NewOIDC(ctx, OIDCConfig{Issuer: is.URL(), Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	good := claimsFor(is)

	p, err := o.Authenticate(ctx, k1.Sign(t, good))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "user-42" || p.Kind != KindOIDC || p.Name != "ann@example.com" || p.Tenant != "acme" || p.Project != "web" ||
		strings.Join(p.Grants, ",") != "run.create,run.read" {
		t.Fatalf("principal %+v", p)
	}
	// Grants as one space-separated string, no project.
	p, err = o.Authenticate(ctx, k1.Sign(t, with(with(good, "grants", "approval.* metrics.read bogus"), "project", nil)))
	if err != nil || p.Project != "" || strings.Join(p.Grants, ",") != "approval.*,metrics.read" {
		t.Fatalf("space-separated grants: %+v %v", p, err)
	}

	other := newKey(t, "k1") // same kid, another key: not the issuer's
	tampered := func() string {
		parts := strings.Split(k1.Sign(t, good), ".")
		evil, _ := json.Marshal(with(good, "tenant", "evil"))
		parts[1] = base64.RawURLEncoding.EncodeToString(evil)
		return strings.Join(parts, ".")
	}()
	none := func() string {
		h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
		c, _ := json.Marshal(good)
		return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c) + ".AAAA"
	}()
	refused := map[string]string{
		"alg none":       none,
		"expired":        k1.Sign(t, with(with(good, "exp", time.Now().Add(-time.Minute).Unix()), "iat", time.Now().Add(-time.Hour).Unix())),
		"wrong audience": k1.Sign(t, with(good, "aud", "someone-else")),
		"wrong issuer":   k1.Sign(t, with(good, "iss", "https://evil.example")),
		"tampered":       tampered,
		"foreign key":    other.Sign(t, good),
		"no tenant":      k1.Sign(t, with(good, "tenant", nil)),
		"empty tenant":   k1.Sign(t, with(good, "tenant", "")),
		"numeric tenant": k1.Sign(t, with(good, "tenant", 7)),
		"bad tenant":     k1.Sign(t, with(good, "tenant", "a/b")),
		"no subject":     k1.Sign(t, with(good, "sub", nil)),
		"object project": k1.Sign(t, with(good, "project", map[string]any{"x": 1})),
	}
	for name, tok := range refused {
		_, err := o.Authenticate(ctx, tok)
		t.Logf("%s: %v", name, err)
		if !errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrUnrecognized) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, notJWT := range []string{"rath_abc", "abc", "a.b", "a..c", "a.b.c.d", "a.b!.c"} {
		if _, err := o.Authenticate(ctx, notJWT); !errors.Is(err, ErrUnrecognized) {
			t.Errorf("%q: %v", notJWT, err)
		}
	}
}

// TestOIDCRotation: the issuer switches keys; a token signed with the new
// key verifies once the key set is fetched again, with no restart; tokens
// of the retired key stop verifying once the cached set is KeysMaxAge old.
func TestOIDCRotation(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	is := newIssuer(t, k1.Public())
	o, err := NewOIDC(ctx, OIDCConfig{Issuer: is.URL(), Audience: audience, KeysMaxAge: 10 * time.Minute, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	claims := with(claimsFor(is), "exp", clk.Now().Add(24*time.Hour).Unix())
	old := k1.Sign(t, claims)
	for range 2 {
		if _, err := o.Authenticate(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.Fetches.Load(); n != 1 {
		t.Fatalf("the key set was fetched %d times for two tokens of a known key (want cached: 1)", n)
	}
	is.SetKeys(k2.Public())
	p, err := o.Authenticate(ctx, k2.Sign(t, claims))
	if err != nil || p.Tenant != "acme" {
		t.Fatalf("token of the new key: %+v %v", p, err)
	}
	if n := is.Fetches.Load(); n != 2 {
		t.Fatalf("key set fetches after rotation: %d, want 2", n)
	}
	clk.Add(10 * time.Minute)
	if _, err := o.Authenticate(ctx, old); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("token of the retired key, the key set %v old: %v", 10*time.Minute, err)
	}
	if _, err := o.Authenticate(ctx, k2.Sign(t, claims)); err != nil {
		t.Fatalf("token of the new key after the refresh: %v", err)
	}
}

func TestOIDCClaimNames(t *testing.T) {
	c := OIDCConfig{TenantClaim: "https://rath.dev/tenant", ProjectClaim: "org.project", GrantsClaim: "realm_access.roles"}
	p, err := c.claimsPrincipal([]byte(`{"sub":"s","https://rath.dev/tenant":"acme","org":{"project":"p1"},
		"realm_access":{"roles":["run.*","offline_access",7]}}`))
	if err != nil || p.Tenant != "acme" || p.Project != "p1" || strings.Join(p.Grants, ",") != "run.*" {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestNewOIDCRefuses(t *testing.T) {
	ctx := context.Background()
	is := newIssuer(t)
	if _, err := NewOIDC(ctx, OIDCConfig{Issuer: is.URL()}); err == nil {
		t.Error("no audience accepted")
	}
	// The document names another issuer than the one configured.
	if _, err := NewOIDC(ctx, OIDCConfig{Issuer: is.URL() + "/", Audience: audience}); err == nil {
		t.Error("an issuer mismatch accepted")
	}
}

// TestChainTokensAndOIDC: one chain takes both kinds of credential.
func TestChainTokensAndOIDC(t *testing.T) {
	ctx := context.Background()
	k := newKey(t, "k")
	is := newIssuer(t, k.Public())
	o, err := NewOIDC(ctx, OIDCConfig{Issuer: is.URL(), Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	tk := NewTokens(openStore(t, "sqlite://"+t.TempDir()+"/rath.db"))
	secret, _, err := tk.Create(ctx, Spec{Grants: []string{"run.read"}})
	if err != nil {
		t.Fatal(err)
	}
	c := Chain(tk, o)
	if p, err := c.Authenticate(ctx, secret); err != nil || p.Kind != KindToken {
		t.Fatalf("token: %+v %v", p, err)
	}
	if p, err := c.Authenticate(ctx, k.Sign(t, claimsFor(is))); err != nil || p.Kind != KindOIDC {
		t.Fatalf("jwt: %+v %v", p, err)
	}
	if _, err := c.Authenticate(ctx, "something else"); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("unknown: %v", err)
	}
}

// A token whose signature does not verify is tried once more on a key set
// made afresh (go-oidc can hand the caller right after a fetch that
// fetch's keys), but only once until a token verifies: forged tokens cost
// the provider one fetch each, as go-oidc makes, plus one.
func TestOIDCForgedTokensFetchBounded(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	k1 := newKey(t, "k1")
	is := newIssuer(t, k1.Public())
	o, err := NewOIDC(ctx, OIDCConfig{Issuer: is.URL(), Audience: audience, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	claims := with(claimsFor(is), "exp", clk.Now().Add(24*time.Hour).Unix())
	if _, err := o.Authenticate(ctx, k1.Sign(t, claims)); err != nil {
		t.Fatal(err)
	}
	base := is.Fetches.Load()
	forger := newKey(t, "k1") // the provider's key id, another key
	const forged = 5
	for range forged {
		if _, err := o.Authenticate(ctx, forger.Sign(t, claims)); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("a forged token: %v", err)
		}
	}
	if n := is.Fetches.Load() - base; n > forged+1 {
		t.Fatalf("%d forged tokens made %d key set fetches, want at most %d", forged, n, forged+1)
	}
	if _, err := o.Authenticate(ctx, k1.Sign(t, claims)); err != nil {
		t.Fatalf("a good token after the forged ones: %v", err)
	}
}
