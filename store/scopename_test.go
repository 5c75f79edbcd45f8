package store

import (
	"errors"
	"strings"
	"testing"
)

// A tenant or project name is one plain name: never "." or "..", nothing
// path-like, no control bytes.
func TestCheckScopeName(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "...", "a/b", "/", `a\b`, "../acme", "acme/..", "a\x00b", "a\nb", "\x7f", strings.Repeat("a", MaxScopeName+1)} {
		if err := CheckScopeName(bad); !errors.Is(err, ErrBadScope) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, ok := range []string{"acme", "default", "a.b", ".hidden", "x..y", "team:1", "~system", strings.Repeat("a", MaxScopeName)} {
		if err := CheckScopeName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, sc := range []Scope{{}, {Tenant: "acme"}, {Tenant: "acme", Project: "web"}, SystemScope} {
		if err := sc.Check(); err != nil {
			t.Errorf("%+v: %v", sc, err)
		}
	}
	for _, sc := range []Scope{{Tenant: ".."}, {Tenant: "acme", Project: "."}, {Project: "../web"}} {
		if err := sc.Check(); !errors.Is(err, ErrBadScope) {
			t.Errorf("%+v: %v", sc, err)
		}
	}
}

func FuzzCheckScopeName(f *testing.F) {
	for _, s := range []string{"acme", ".", "..", "a/b", ".x", "x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckScopeName(name) != nil {
			return
		}
		if name == "" || strings.Trim(name, ".") == "" || strings.ContainsAny(name, `/\`) || len(name) > MaxScopeName {
			t.Fatalf("%q accepted", name)
		}
		for i := 0; i < len(name); i++ {
			if name[i] < 0x20 || name[i] == 0x7f {
				t.Fatalf("%q accepted", name)
			}
		}
	})
}
