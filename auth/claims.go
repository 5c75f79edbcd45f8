package auth

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// principal maps a verified token's claims to a principal: "sub" is its
// ID, TenantClaim its tenant (required), ProjectClaim its project, and
// GrantsClaim its grants — those that are not valid grants (an "openid"
// scope, say) grant nothing and are dropped. "email" or
// "preferred_username" is its Name. Its errors wrap ErrUnauthenticated.
func (c OIDCConfig) principal(claims map[string]any) (Principal, error) {
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return Principal{}, fmt.Errorf("%w: oidc: the token has no subject", ErrUnauthenticated)
	}
	tenant, ok := lookupClaim(claims, c.TenantClaim).(string)
	if !ok || tenant == "" {
		return Principal{}, fmt.Errorf("%w: oidc: the token names no tenant (claim %q)", ErrUnauthenticated, c.TenantClaim)
	}
	if err := CheckScope(tenant); err != nil {
		return Principal{}, fmt.Errorf("%w: oidc: claim %q: %w", ErrUnauthenticated, c.TenantClaim, err)
	}
	p := Principal{ID: sub, Kind: KindOIDC, Tenant: tenant, Grants: []string{}}
	switch v := lookupClaim(claims, c.ProjectClaim).(type) {
	case nil:
	case string:
		if v != "" {
			if err := CheckScope(v); err != nil {
				return Principal{}, fmt.Errorf("%w: oidc: claim %q: %w", ErrUnauthenticated, c.ProjectClaim, err)
			}
		}
		p.Project = v
	default:
		return Principal{}, fmt.Errorf("%w: oidc: claim %q is not a string", ErrUnauthenticated, c.ProjectClaim)
	}
	for _, g := range claimStrings(lookupClaim(claims, c.GrantsClaim)) {
		if pg, err := ParseGrant(g); err == nil && !slices.Contains(p.Grants, pg) {
			p.Grants = append(p.Grants, pg)
		}
	}
	slices.Sort(p.Grants)
	for _, k := range []string{"email", "preferred_username", "name"} {
		if s, ok := claims[k].(string); ok && s != "" {
			p.Name = s
			break
		}
	}
	return p, nil
}

// lookupClaim returns the claim name, or, if there is none of that name
// and it has dots, the value at that path through nested objects.
func lookupClaim(claims map[string]any, name string) any {
	if v, ok := claims[name]; ok {
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[part]; !ok {
			return nil
		}
	}
	return cur
}

// claimStrings reads a claim holding strings: a JSON array of them (other
// elements are skipped) or one space-separated string.
func claimStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// claimsPrincipal maps raw JSON claims (fuzzing and tests).
func (c OIDCConfig) claimsPrincipal(raw []byte) (Principal, error) {
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		return Principal{}, fmt.Errorf("%w: oidc: claims: %w", ErrUnauthenticated, err)
	}
	return c.withDefaults().principal(claims)
}
