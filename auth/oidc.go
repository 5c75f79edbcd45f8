package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// OIDCConfig says which identity provider's tokens to accept and how their
// claims map to a principal.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL: its discovery document is read
	// from Issuer + "/.well-known/openid-configuration", and every token's
	// "iss" must equal it.
	Issuer string
	// Audience must be one of every token's "aud".
	Audience string
	// TenantClaim, ProjectClaim and GrantsClaim name the claims that hold
	// the tenant (required), the project (optional) and the grants (a JSON
	// array of strings or one space-separated string) — "tenant",
	// "project" and "grants" by default. A name is looked up as it is,
	// then, failing that, as a path through nested objects
	// ("realm_access.roles").
	TenantClaim, ProjectClaim, GrantsClaim string
	// HTTPClient fetches the discovery document and the key set (nil:
	// http.DefaultClient).
	HTTPClient *http.Client
	// KeysMaxAge is how long the provider's key set is trusted before it
	// is fetched again (DefaultKeysMaxAge). A key the provider stops
	// publishing stops verifying within it.
	KeysMaxAge time.Duration
	// Now replaces time.Now when checking expiry and the key set's age
	// (tests).
	Now func() time.Time
}

func (c OIDCConfig) withDefaults() OIDCConfig {
	c.TenantClaim = cmpOr(c.TenantClaim, "tenant")
	c.ProjectClaim = cmpOr(c.ProjectClaim, "project")
	c.GrantsClaim = cmpOr(c.GrantsClaim, "grants")
	if c.KeysMaxAge <= 0 {
		c.KeysMaxAge = DefaultKeysMaxAge
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// OIDC authenticates JWT bearer tokens signed by an OpenID Connect
// provider (github.com/coreos/go-oidc/v3). The provider's key set (JWKS)
// is fetched when first needed and cached; a token signed by a key not in
// the cache makes it fetch the set again, so a provider's key rotation
// needs no restart, and the set is fetched again once older than
// KeysMaxAge, so a retired key stops verifying. It is safe for concurrent
// use.
type OIDC struct {
	cfg      OIDCConfig
	verifier *oidc.IDTokenVerifier
}

// NewOIDC reads the provider's discovery document and returns its
// authenticator. Its errors are the provider's: unreachable, or a
// document whose issuer is not cfg.Issuer.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	cfg = cfg.withDefaults()
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("auth: oidc: an issuer and an audience are required")
	}
	if cfg.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, cfg.HTTPClient)
	}
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("auth: oidc: discover %s: %w", cfg.Issuer, err)
	}
	var doc struct {
		JWKS string   `json:"jwks_uri"`
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKS == "" {
		return nil, fmt.Errorf("auth: oidc: %s: the discovery document names no jwks_uri", cfg.Issuer)
	}
	keys := &agedKeys{ctx: context.WithoutCancel(ctx), url: doc.JWKS, maxAge: cfg.KeysMaxAge, now: cfg.Now}
	v := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{ClientID: cfg.Audience, Now: cfg.Now, SupportedSigningAlgs: signingAlgs(doc.Algs)})
	return &OIDC{cfg: cfg, verifier: v}, nil
}

// signingAlgs keeps the asymmetric algorithms of algs (the provider's
// id_token_signing_alg_values_supported): RS256 if it names none. "none"
// and the HMAC algorithms, whose key would be public, are never accepted.
func signingAlgs(algs []string) []string {
	var out []string
	for _, a := range algs {
		switch a {
		case oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA:
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = []string{oidc.RS256}
	}
	return out
}

// Authenticate verifies a JWT — signature, issuer, audience, expiry — and
// maps its claims to a principal of Kind "oidc". A credential that is not
// a JWT is an error wrapping ErrUnrecognized; a JWT that fails a check, or
// names no tenant, ErrUnauthenticated.
func (o *OIDC) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	if !looksLikeJWT(bearer) {
		return Principal{}, ErrUnrecognized
	}
	tok, err := o.verifier.Verify(ctx, bearer)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Principal{}, fmt.Errorf("%w: oidc: claims: %w", ErrUnauthenticated, err)
	}
	return o.cfg.principal(claims)
}

// looksLikeJWT reports whether s has a compact JWS's shape: three
// non-empty base64url parts separated by dots.
func looksLikeJWT(s string) bool {
	if strings.HasPrefix(s, TokenPrefix) {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.ContainsFunc(p, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' && r != '='
		}) {
			return false
		}
	}
	return true
}
