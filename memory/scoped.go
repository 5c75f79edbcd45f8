package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/store"
)

// Memory is confined to the scope (tenant and project) of the work that
// uses it (runctx.Scope): an entry written in a scope carries it, and only
// that scope's reads, recalls, lists and forgets reach it. The scope is
// kept in the entry's scope id: "tenant~project~id" ('~' is in no tenant
// or project name) — outside the default scope, whose entries keep their
// ids as they were before scopes. Callers and the session's memory events
// see ids as they gave them.

// scopeSep joins a tenant, a project and a scope id.
const scopeSep = "~"

// nsOf is the prefix of ctx's scope ("" for the default scope).
func nsOf(ctx context.Context) string {
	sc := runctx.Scope(ctx)
	if sc.Tenant == store.DefaultScope && sc.Project == store.DefaultScope {
		return ""
	}
	return sc.Tenant + scopeSep + sc.Project + scopeSep
}

// inScope reports whether a stored scope id is of namespace ns, and the
// id as its scope gave it.
func inScope(ns, stored string) (string, bool) {
	if ns == "" {
		return stored, !strings.Contains(stored, scopeSep)
	}
	return strings.CutPrefix(stored, ns)
}

// scopedBackend is a backend seen from the scope of each call's context.
type scopedBackend struct{ Backend }

func (b scopedBackend) to(ns string, u URI) URI {
	u.ScopeID = ns + u.ScopeID
	return u
}

// from maps a stored URI back, or reports that it is another scope's.
func (b scopedBackend) from(ns string, u URI) (URI, bool) {
	id, ok := inScope(ns, u.ScopeID)
	u.ScopeID = id
	return u, ok
}

// toPrefix maps a URI prefix ("memory://scope/id/...", or shorter).
func (b scopedBackend) toPrefix(ns, prefix string) string {
	rest, ok := strings.CutPrefix(prefix, "memory://")
	scope, id, hasID := strings.Cut(rest, "/")
	if !ok || !hasID || ns == "" {
		return prefix // filtered on the way out
	}
	return "memory://" + scope + "/" + ns + id
}

func (b scopedBackend) Put(ctx context.Context, e Entry) error {
	e.URI = b.to(nsOf(ctx), e.URI)
	return b.Backend.Put(ctx, e)
}

func (b scopedBackend) Search(ctx context.Context, query string, scopes []string, k int) ([]Hit, error) {
	ns := nsOf(ctx)
	mapped := make([]string, len(scopes))
	for i, s := range scopes {
		scope, id, _ := strings.Cut(s, "/")
		mapped[i] = scope + "/" + ns + id
	}
	hits, err := b.Backend.Search(ctx, query, mapped, k)
	out := hits[:0]
	for _, h := range hits {
		if u, ok := b.from(ns, h.URI); ok {
			h.URI = u
			out = append(out, h)
		}
	}
	return out, err
}

func (b scopedBackend) Get(ctx context.Context, uri URI) (Entry, error) {
	ns := nsOf(ctx)
	if _, ok := inScope("", uri.ScopeID); !ok && ns == "" {
		return Entry{}, ErrNotFound // another scope's stored id, asked for by name
	}
	e, err := b.Backend.Get(ctx, b.to(ns, uri))
	if err != nil {
		return Entry{}, err
	}
	e.URI = uri
	return e, nil
}

func (b scopedBackend) List(ctx context.Context, prefix string) ([]Entry, error) {
	ns := nsOf(ctx)
	es, err := b.Backend.List(ctx, b.toPrefix(ns, prefix))
	if err != nil {
		return nil, err
	}
	out := es[:0]
	for _, e := range es {
		if u, ok := b.from(ns, e.URI); ok {
			e.URI = u
			out = append(out, e)
		}
	}
	return out, nil
}

func (b scopedBackend) Delete(ctx context.Context, sel Selector) ([]URI, error) {
	return b.delete(ctx, sel, b.Backend.Delete)
}

// DeleteOnce implements OnceDeleter over a backend that does (else it is
// Delete).
func (b scopedBackend) DeleteOnce(ctx context.Context, key string, sel Selector) ([]URI, error) {
	od, ok := b.Backend.(OnceDeleter)
	if !ok {
		return b.Delete(ctx, sel)
	}
	// Keyed within the scope: one step's forgets in two scopes are two.
	key = nsOf(ctx) + " " + key
	return b.delete(ctx, sel, func(ctx context.Context, sel Selector) ([]URI, error) { return od.DeleteOnce(ctx, key, sel) })
}

// delete is a Delete of sel through del, in ctx's scope.
func (b scopedBackend) delete(ctx context.Context, sel Selector, del func(context.Context, Selector) ([]URI, error)) ([]URI, error) {
	ns := nsOf(ctx)
	if sel.URI != "" {
		u, err := ParseURI(sel.URI)
		if err != nil {
			return nil, err
		}
		sel.URI = b.to(ns, u).String()
	}
	if sel.Prefix != "" {
		mapped := b.toPrefix(ns, sel.Prefix)
		if ns != "" && mapped == sel.Prefix {
			// A prefix above scope ids would reach other scopes' entries.
			return nil, fmt.Errorf("%w: forget by a prefix that names a scope and its id (memory://project/ID/...), not %q", ErrScope, sel.Prefix)
		}
		sel.Prefix = mapped
	}
	gone, err := del(ctx, sel)
	out := gone[:0]
	for _, u := range gone {
		if m, ok := b.from(ns, u); ok {
			out = append(out, m)
		} else {
			out = append(out, u)
		}
	}
	return out, err
}

// Describe is the backend's description (Describe sees through the view).
func (b scopedBackend) Describe() string {
	if d, ok := b.Backend.(Describer); ok {
		return d.Describe()
	}
	return b.Backend.Name()
}
