package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Principal is who a request acts for: its identity, the tenant and
// project it is confined to, and the grants it holds.
type Principal struct {
	// ID identifies the principal within its Kind: a token's id, an OIDC
	// subject, "local" or "static".
	ID string `json:"id"`
	// Kind is "token", "oidc", "local" or "static".
	Kind string `json:"kind"`
	// Name is a readable name when one is known: a token's name, an OIDC
	// email or preferred_username.
	Name string `json:"name,omitempty"`
	// Tenant is always set; Project is "" when the principal may act in
	// every project of its tenant.
	Tenant  string   `json:"tenant"`
	Project string   `json:"project,omitempty"`
	Grants  []string `json:"grants"`
}

// Principal kinds.
const (
	KindToken  = "token"
	KindOIDC   = "oidc"
	KindLocal  = "local"
	KindStatic = "static"
)

// DefaultScope is the tenant and project of the local principal, and of
// a token created without them.
const DefaultScope = "default"

// Local is the implicit local principal: on loopback, while the store
// holds no token, every request acts as it (see Tokens.Implicit). It holds
// every grant.
func Local() Principal {
	return Principal{ID: "local", Kind: KindLocal, Tenant: DefaultScope, Project: DefaultScope, Grants: []string{Admin}}
}

// Allows reports whether p holds grant: exactly, through its resource's
// wildcard ("run.*" covers "run.read"), or through "*".
//
// An operator grant (cluster.read) is allowed only to a principal of
// tenant DefaultScope, whatever it holds (see operatorGrants).
func (p Principal) Allows(grant string) bool {
	if operatorGrant(grant) && !p.operator() {
		return false
	}
	resource, _, dotted := strings.Cut(grant, ".")
	return slices.ContainsFunc(p.Grants, func(g string) bool {
		if g == Admin || g == grant {
			return true
		}
		r, ok := strings.CutSuffix(g, ".*")
		return ok && dotted && r == resource
	})
}

// Require is nil if p holds grant, else an error wrapping ErrForbidden
// that names the missing grant.
func Require(p Principal, grant string) error {
	if p.Allows(grant) {
		return nil
	}
	if operatorGrant(grant) && !p.operator() {
		return errOperatorGrant(p, grant)
	}
	return fmt.Errorf("%w: %s %q lacks the grant %q", ErrForbidden, orKind(p.Kind), p.ID, grant)
}

func orKind(k string) string {
	if k == "" {
		return "principal"
	}
	return k
}
