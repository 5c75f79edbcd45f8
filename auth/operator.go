package auth

import (
	"fmt"
	"slices"
	"strings"
)

// operatorGrants are grants over the runtime itself rather than a scope:
// cluster.read shows every tenant's runs, their inputs and the workers
// that hold them. Only an operator's principal holds them: one of tenant
// DefaultScope (the local principal, the server's own token, tokens and
// identities the operator makes there). A principal of any other tenant
// never does, whatever it was granted ("*" and "cluster.*" included):
// Allows says no, and a token of another tenant cannot be created with
// one named.
var operatorGrants = []string{"cluster.read"}

// operatorGrant reports whether grant is one of operatorGrants.
func operatorGrant(grant string) bool { return slices.Contains(operatorGrants, grant) }

// operator reports whether p may hold operator grants.
func (p Principal) operator() bool { return p.Tenant == DefaultScope }

// errOperatorGrant is Require's answer to a principal of another tenant
// asking for an operator grant.
func errOperatorGrant(p Principal, grant string) error {
	return fmt.Errorf("%w: %s is an operator's grant (it shows every tenant's state); %s %q acts in tenant %q, and only principals of tenant %q hold it",
		ErrForbidden, grant, orKind(p.Kind), p.ID, p.Tenant, DefaultScope)
}

// checkOperatorGrants refuses a token of a tenant other than DefaultScope
// that names an operator grant, or its resource's wildcard.
func checkOperatorGrants(tenant string, grants []string) error {
	if tenant == DefaultScope {
		return nil
	}
	for _, g := range grants {
		for _, og := range operatorGrants {
			resource, _, _ := strings.Cut(og, ".")
			if g == og || g == resource+".*" {
				return fmt.Errorf("%w: %s is an operator's grant (it shows every tenant's state); a token of tenant %q cannot hold it", ErrBadGrant, g, tenant)
			}
		}
	}
	return nil
}
