package store

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"
)

// Opener opens a store for a parsed URL.
type Opener func(ctx context.Context, u *url.URL) (Store, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a backend available under a URL scheme. It panics if the
// scheme is registered twice, as database/sql.Register does: that is a
// programming error found at init.
func Register(scheme string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		panic("store: Register called twice for scheme " + scheme)
	}
	registry[scheme] = open
}

// Schemes lists the registered URL schemes.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Open opens the store at rawURL, such as "sqlite:///home/me/.rath/rath.db"
// or "postgres://user@127.0.0.1:5432/rath", through the backend registered
// for its scheme.
func Open(ctx context.Context, rawURL string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: parse URL: %w", err)
	}
	registryMu.RLock()
	open, ok := registry[u.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q in %q (registered: %v; import the backend package, e.g. _ \"github.com/openrath/rath/store/sqlite\")",
			ErrUnknownScheme, u.Scheme, Redact(rawURL), Schemes())
	}
	return open(ctx, u)
}

// Redact returns rawURL with any password replaced — in the user info, or
// in a password= parameter as PostgreSQL allows — for messages.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
