package auth

import (
	"fmt"
	"strings"
)

// MaxScope is the longest tenant or project name, in bytes.
const MaxScope = 128

// CheckScope reports whether name is a valid tenant or project name: 1 to
// MaxScope bytes of letters, digits, '.', '_', '-', ':' and '@', not made
// of dots alone ("." and ".." name paths, not scopes). A valid name passes
// store.CheckScopeName. Its error wraps ErrBadScope.
func CheckScope(name string) error {
	if name == "" || len(name) > MaxScope {
		return fmt.Errorf("%w: %q must be 1 to %d bytes long", ErrBadScope, name, MaxScope)
	}
	if strings.Trim(name, ".") == "" {
		return fmt.Errorf("%w: %q is made of dots alone, as a path is", ErrBadScope, name)
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if (b < 'a' || b > 'z') && (b < 'A' || b > 'Z') && (b < '0' || b > '9') && b != '.' && b != '_' && b != '-' && b != ':' && b != '@' {
			return fmt.Errorf("%w: %q: byte %#02x is not a letter, digit or one of . _ - : @", ErrBadScope, name, b)
		}
	}
	return nil
}
