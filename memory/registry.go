package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync"

	"github.com/openrath/rath/model"
)

// ErrUnknownScheme: no backend is registered for a memory URL's scheme.
var ErrUnknownScheme = errors.New("memory: no backend for scheme")

// Options configure a backend opened by URL.
type Options struct {
	// Embedder, if set, embeds every entry written and makes recall hybrid:
	// lexical and vector-similarity rankings fused by reciprocal rank.
	Embedder model.Embedder
	// Logger hears what a backend has to say at open, such as how it will
	// rank; nil is slog.Default().
	Logger *slog.Logger
}

// Log is o.Logger, or slog.Default() when it is nil.
func (o Options) Log() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Opener opens a memory backend for a parsed URL.
type Opener func(ctx context.Context, u *url.URL, o Options) (Memory, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a backend available under a URL scheme. It panics if the
// scheme is registered twice: that is a programming error found at init.
func Register(scheme string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		panic("memory: Register called twice for scheme " + scheme)
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

// Open opens the memory at rawURL — "sqlite:///home/me/.rath/memory.db"
// (memory/local) or "postgres://user@host/db" (memory/postgres) — through
// the backend registered for its scheme.
func Open(ctx context.Context, rawURL string, o Options) (Memory, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("memory: parse URL: %w", err)
	}
	registryMu.RLock()
	open, ok := registry[u.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q in %q (registered: %v; import the backend package, e.g. _ \"github.com/openrath/rath/memory/local\")",
			ErrUnknownScheme, u.Scheme, u.Redacted(), Schemes())
	}
	return open(ctx, u, o)
}

// Describer is a memory that can say what it is: its backend, where it
// lives, and how it ranks ("postgres 127.0.0.1:5432/rath: full-text
// (english), vectors by exact scan").
type Describer interface {
	Describe() string
}

// Describe is m's own description if it has one, else its type.
func Describe(m Memory) string {
	if d, ok := m.(Describer); ok {
		return d.Describe()
	}
	if r, ok := m.(*recorded); ok {
		if d, ok := r.b.(Describer); ok {
			return d.Describe()
		}
		return r.b.Name()
	}
	return fmt.Sprintf("%T", m)
}
