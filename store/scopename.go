package store

import (
	"errors"
	"fmt"
	"strings"
)

// MaxScopeName is the longest tenant or project name, in bytes.
const MaxScopeName = 255

// ErrBadScope: a tenant or project name is not one plain name (see
// CheckScopeName).
var ErrBadScope = errors.New("store: bad tenant or project name")

// CheckScopeName reports whether name can name a tenant or a project: 1 to
// MaxScopeName bytes, not made of dots alone ("." or ".."), without '/',
// '\' or a control byte — never anything a path could be made of. Those
// who take names from people (tokens, an identity provider's claims) may
// refuse more (auth.CheckScope). Its error wraps ErrBadScope.
func CheckScopeName(name string) error {
	switch {
	case name == "" || len(name) > MaxScopeName:
		return fmt.Errorf("%w: %q must be 1 to %d bytes long", ErrBadScope, name, MaxScopeName)
	case strings.Trim(name, ".") == "":
		return fmt.Errorf("%w: %q is made of dots alone, as a path is", ErrBadScope, name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%w: %q holds a path separator", ErrBadScope, name)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: %q holds a control character", ErrBadScope, name)
	}
	return nil
}

// Check reports whether sc's names are valid (CheckScopeName); a zero
// Tenant (DefaultScope) and a zero Project (every project) are.
func (sc Scope) Check() error {
	if sc.Tenant != "" {
		if err := CheckScopeName(sc.Tenant); err != nil {
			return fmt.Errorf("tenant: %w", err)
		}
	}
	if sc.Project != "" {
		if err := CheckScopeName(sc.Project); err != nil {
			return fmt.Errorf("project: %w", err)
		}
	}
	return nil
}
