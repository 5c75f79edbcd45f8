package auth

import (
	"errors"
	"fmt"
)

var (
	// ErrUnauthenticated: the request carries no credentials, or ones that
	// are invalid, expired or revoked (HTTP 401).
	ErrUnauthenticated = errors.New("auth: unauthenticated")
	// ErrUnrecognized: an authenticator does not recognize the credential's
	// form (a Tokens authenticator given a JWT, say), so the next one of a
	// Chain may try it. It wraps ErrUnauthenticated: a credential no
	// authenticator recognizes is refused.
	ErrUnrecognized = fmt.Errorf("%w: the credential is of no form this server accepts", ErrUnauthenticated)
	// ErrForbidden: the principal is authenticated but lacks the grant the
	// action needs (HTTP 403); the message names the grant.
	ErrForbidden = errors.New("auth: forbidden")
	// ErrNoToken: no token has that id.
	ErrNoToken = errors.New("auth: no such token")
	// ErrBadGrant: a grant is not a known resource.verb, resource.* or *,
	// or * was asked for without Admin.
	ErrBadGrant = errors.New("auth: bad grant")
	// ErrBadScope: a tenant or project name is not valid (see CheckScope).
	ErrBadScope = errors.New("auth: bad tenant or project")
)

// ErrBadToken: a token to create is not valid (its name or expiry).
var ErrBadToken = errors.New("auth: bad token")
