package runctx

import (
	"context"

	"github.com/openrath/rath/store"
)

type scopeKey struct{}

// WithScope returns ctx for work done on behalf of scope sc: the tenant
// and project a run belongs to, which policies see among an action's facts
// and quotas count against.
func WithScope(ctx context.Context, sc store.Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, sc)
}

// Scope returns the scope ctx works for: WithScope's, else the default
// tenant and project.
func Scope(ctx context.Context) store.Scope {
	if sc, ok := ctx.Value(scopeKey{}).(store.Scope); ok {
		return store.ScopeOf(sc.Labels())
	}
	return store.ScopeOf(nil)
}
