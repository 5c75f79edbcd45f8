package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
)

// Authenticator turns a bearer credential into a principal. A credential
// of a form it does not handle is an error wrapping ErrUnrecognized; one
// it handles but refuses (unknown, expired, revoked, badly signed) wraps
// ErrUnauthenticated only.
type Authenticator interface {
	Authenticate(ctx context.Context, bearer string) (Principal, error)
}

// Chain tries each authenticator in order; the first that recognizes the
// credential decides. A credential none recognizes, or an empty one, is
// an error wrapping ErrUnauthenticated.
func Chain(as ...Authenticator) Authenticator { return chain(as) }

type chain []Authenticator

func (c chain) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	if bearer == "" {
		return Principal{}, fmt.Errorf("%w: no credentials", ErrUnauthenticated)
	}
	for _, a := range c {
		p, err := a.Authenticate(ctx, bearer)
		if errors.Is(err, ErrUnrecognized) {
			continue
		}
		return p, err
	}
	return Principal{}, ErrUnrecognized
}

// BearerToken returns the credential of an Authorization header value
// "Bearer <token>" (the scheme case-insensitive, spaces around the token
// trimmed), and false when the header holds no bearer credential.
func BearerToken(header string) (string, bool) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.TrimSpace(rest)
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", false
	}
	return tok, true
}

// Static authenticates one fixed token (the server's --token) as p, whose
// Kind becomes "static". Any other credential is unrecognized, so a Chain
// may try it elsewhere. The comparison takes the same time whatever the
// credential holds: both sides are hashed to a fixed length first.
func Static(token string, p Principal) Authenticator {
	p.Kind = KindStatic
	if p.ID == "" {
		p.ID = KindStatic
	}
	return static{sum: sha256.Sum256([]byte(token)), p: p}
}

type static struct {
	sum [sha256.Size]byte
	p   Principal
}

func (s static) Authenticate(_ context.Context, bearer string) (Principal, error) {
	got := sha256.Sum256([]byte(bearer))
	if subtle.ConstantTimeCompare(got[:], s.sum[:]) != 1 {
		return Principal{}, ErrUnrecognized
	}
	p := s.p
	p.Grants = append([]string(nil), p.Grants...)
	return p, nil
}
