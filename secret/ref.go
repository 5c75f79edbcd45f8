package secret

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scheme is how every reference begins.
const Scheme = "secret://"

// MaxRefLen bounds a reference's length in bytes.
const MaxRefLen = 1024

// Built-in resolvers' names.
const (
	Env  = "env"
	File = "file"
)

// Ref is a parsed reference: secret://Resolver/Name.
type Ref struct {
	// Resolver names the resolver: "env", "file" or a registered one.
	Resolver string
	// Name is what the resolver looks up: an environment variable's
	// name, a file's absolute path without its leading slash, or a
	// registered resolver's own key.
	Name string
}

// IsRef reports whether s is meant as a reference: it begins with
// "secret:" (in any case). Such a string is never used as a value; if it
// is not well formed, Parse says why.
func IsRef(s string) bool {
	return len(s) >= len("secret:") && strings.EqualFold(s[:len("secret:")], "secret:")
}

// Parse reads a reference. Its errors wrap ErrBadRef.
func Parse(s string) (Ref, error) {
	if len(s) > MaxRefLen {
		return Ref{}, fmt.Errorf("%w: %d bytes, more than %d", ErrBadRef, len(s), MaxRefLen)
	}
	if !utf8.ValidString(s) {
		return Ref{}, fmt.Errorf("%w: %q is not valid UTF-8", ErrBadRef, s)
	}
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("%w: %q does not begin with %s (write %sRESOLVER/NAME, as secret://env/NAME)", ErrBadRef, s, Scheme, Scheme)
	}
	resolver, name, ok := strings.Cut(rest, "/")
	if !ok {
		return Ref{}, fmt.Errorf("%w: %q names no secret (write %s%s/NAME)", ErrBadRef, s, Scheme, resolver)
	}
	r := Ref{Resolver: resolver, Name: name}
	if err := r.check(); err != nil {
		return Ref{}, fmt.Errorf("%w: %q: %s", ErrBadRef, s, err)
	}
	return r, nil
}

// MustParse is Parse for references known to be well formed; it panics
// otherwise.
func MustParse(s string) Ref {
	r, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String is the reference as written: secret://Resolver/Name.
func (r Ref) String() string { return Scheme + r.Resolver + "/" + r.Name }

// IsZero reports whether r is the zero Ref (no reference).
func (r Ref) IsZero() bool { return r == Ref{} }

// MarshalText writes the reference (a reference is not a secret).
func (r Ref) MarshalText() ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadRef, err)
	}
	return []byte(r.String()), nil
}

// UnmarshalText parses a reference.
func (r *Ref) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*r = p
	return nil
}

// check reports what is wrong with r, in words that do not repeat it.
func (r Ref) check() error {
	if err := checkResolverName(r.Resolver); err != nil {
		return err
	}
	if r.Name == "" {
		return fmt.Errorf("the name after %s%s/ is empty", Scheme, r.Resolver)
	}
	if len(Scheme)+len(r.Resolver)+1+len(r.Name) > MaxRefLen {
		return fmt.Errorf("longer than %d bytes", MaxRefLen)
	}
	for _, c := range r.Name {
		if unicode.IsControl(c) || (unicode.IsSpace(c) && c != ' ') {
			return fmt.Errorf("the name holds a control or white-space character (%U)", c)
		}
	}
	if strings.TrimSpace(r.Name) != r.Name {
		return fmt.Errorf("the name begins or ends with a space")
	}
	switch r.Resolver {
	case Env:
		if !envName(r.Name) {
			return fmt.Errorf("%q is not an environment variable's name (letters, digits and _, not starting with a digit)", r.Name)
		}
	case File:
		p := "/" + r.Name
		if path.Clean(p) != p {
			return fmt.Errorf("the path %s is not written plainly (no //, . or .. segments, no trailing /): secret://file/PATH names the absolute path /PATH", p)
		}
	}
	return nil
}

// checkResolverName reports what is wrong with a resolver's name: it is 1
// to 64 of a-z, 0-9, - and _, starting with a letter.
func checkResolverName(n string) error {
	if n == "" {
		return fmt.Errorf("no resolver named (write %sRESOLVER/NAME, as secret://env/NAME)", Scheme)
	}
	if len(n) > 64 {
		return fmt.Errorf("the resolver's name is longer than 64 bytes")
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '_'):
		default:
			return fmt.Errorf("the resolver's name %q is not lower-case letters, digits, - and _ starting with a letter", n)
		}
	}
	return nil
}

// envName reports whether n is a portable environment variable name.
func envName(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return n != ""
}
