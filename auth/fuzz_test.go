package auth

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseGrant: ParseGrant accepts exactly "*", the table's grants and
// the wildcards of its resources; what it accepts it accepts again
// unchanged, and a principal holding it is allowed it.
func FuzzParseGrant(f *testing.F) {
	for _, s := range []string{"*", "run.*", "run.read", " token.admin", "run", "runs.read", ".", "run..", "*.*", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGrant(s)
		if err != nil {
			if !errors.Is(err, ErrBadGrant) {
				t.Fatalf("%q: error %v does not wrap ErrBadGrant", s, err)
			}
			return
		}
		if g2, err := ParseGrant(g); err != nil || g2 != g {
			t.Fatalf("%q parsed as %q, which parses as %q, %v", s, g, g2, err)
		}
		r, v, _ := strings.Cut(g, ".")
		if g != Admin && !knownGrant(g) && (v != "*" || !knownResource(r)) {
			t.Fatalf("%q accepted as %q", s, g)
		}
		if !(Principal{Grants: []string{g}}).Allows(g) {
			t.Fatalf("a principal holding %q is not allowed it", g)
		}
	})
}

// FuzzBearerToken: a credential read from a header is non-empty and has
// no spaces, and a well-formed header gives back its token.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x ", "Basic x", "Bearer", "Bearer a b", "\tBearer\tx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := BearerToken(h)
		if ok != (tok != "") || strings.ContainsAny(tok, " \t\r\n") {
			t.Fatalf("%q: %q, %v", h, tok, ok)
		}
		if ok {
			if back, ok := BearerToken("Bearer " + tok); !ok || back != tok {
				t.Fatalf("%q: round trip %q", tok, back)
			}
		}
	})
}

// FuzzClaims: claims either map to a principal with a valid tenant, valid
// project and only valid grants, or are refused with ErrUnauthenticated.
func FuzzClaims(f *testing.F) {
	for _, s := range []string{
		`{"sub":"s","tenant":"t","grants":["run.read","x"]}`,
		`{"sub":"s","tenant":"t","project":"p","grants":"run.* *"}`,
		`{"sub":"s","tenant":7}`, `{"sub":"s"}`, `[]`, `null`, `{"sub":"s","tenant":"a b"}`,
		`{"sub":"s","tenant":"t","project":{"a":1}}`,
	} {
		f.Add(s)
	}
	c := OIDCConfig{}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := c.claimsPrincipal([]byte(raw))
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("%s: %v", raw, err)
			}
			return
		}
		if p.Kind != KindOIDC || p.ID == "" || CheckScope(p.Tenant) != nil || (p.Project != "" && CheckScope(p.Project) != nil) {
			t.Fatalf("%s: %+v", raw, p)
		}
		for _, g := range p.Grants {
			if _, err := ParseGrant(g); err != nil || g != strings.TrimSpace(g) {
				t.Fatalf("%s: grant %q: %v", raw, g, err)
			}
		}
	})
}
