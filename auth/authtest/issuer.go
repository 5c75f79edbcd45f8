// Package authtest is an in-test OpenID provider for tests of
// authentication: a discovery document, a key set it can rotate, and RSA
// keys that sign JWTs.
package authtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issuer is an in-test OpenID provider.
type Issuer struct {
	Srv *httptest.Server
	// Fetches counts the fetches of its key set.
	Fetches atomic.Int32

	mu   sync.Mutex
	keys []jose.JSONWebKey // public
}

// NewIssuer starts a provider publishing the public keys pub; it stops
// when the test ends.
func NewIssuer(t testing.TB, pub ...jose.JSONWebKey) *Issuer {
	is := &Issuer{keys: pub}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.Srv.URL, "jwks_uri": is.Srv.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		is.Fetches.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: is.keys})
	})
	is.Srv = httptest.NewServer(mux)
	t.Cleanup(is.Srv.Close)
	return is
}

// URL is the issuer's URL (its "iss").
func (is *Issuer) URL() string { return is.Srv.URL }

// SetKeys replaces the published key set.
func (is *Issuer) SetKeys(pub ...jose.JSONWebKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = pub
}

// Key is an RSA signing key with its id.
type Key struct {
	Kid  string
	Priv *rsa.PrivateKey
}

// NewKey makes a 2048-bit RSA key named kid.
func NewKey(t testing.TB, kid string) Key {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return Key{kid, priv}
}

// Public is the key as a key set publishes it.
func (k Key) Public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &k.Priv.PublicKey, KeyID: k.Kid, Algorithm: string(jose.RS256), Use: "sig"}
}

// Sign makes a compact RS256 JWT of claims.
func (k Key) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k.Priv, KeyID: k.Kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Claims are valid claims from is for audience, good for an hour, with
// more (tenant, project, grants...) added.
func Claims(is *Issuer, audience string, more map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": is.URL(), "aud": audience, "sub": "user-42", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range more {
		c[k] = v
	}
	return c
}
