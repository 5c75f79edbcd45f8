package store

import (
	"context"
	"errors"
)

// Labels that place a session in a tenant and a project. They are set when
// a session is created on a principal's behalf and never change; a session
// without them belongs to DefaultScope in both.
const (
	LabelTenant  = "rath.tenant"
	LabelProject = "rath.project"
)

// DefaultScope is the tenant and the project of a session created without
// one (by the local principal, or before scopes existed).
const DefaultScope = "default"

// ErrOutOfScope is returned when a scoped view is asked to change what its
// scope does not cover (a session's scope labels, or a session of another
// scope it cannot see: those answer ErrNotFound).
var ErrOutOfScope = errors.New("store: outside the scope")

// Scope is a tenant and a project. A zero Project covers every project of
// the tenant; a zero Tenant is DefaultScope.
type Scope struct {
	Tenant  string `json:"tenant"`
	Project string `json:"project,omitempty"`
}

// ScopeOf is the scope a session's labels place it in (DefaultScope for
// each one missing).
func ScopeOf(labels map[string]string) Scope {
	sc := Scope{Tenant: labels[LabelTenant], Project: labels[LabelProject]}
	if sc.Tenant == "" {
		sc.Tenant = DefaultScope
	}
	if sc.Project == "" {
		sc.Project = DefaultScope
	}
	return sc
}

// Covers reports whether an object in scope o is visible from sc: the same
// tenant, and the same project unless sc covers every project.
func (sc Scope) Covers(o Scope) bool {
	t := sc.Tenant
	if t == "" {
		t = DefaultScope
	}
	return t == o.Tenant && (sc.Project == "" || sc.Project == o.Project)
}

// Labels are the labels that place a new session in sc: its tenant, and
// its project (DefaultScope when sc covers every project: an object is
// always in one project).
func (sc Scope) Labels() map[string]string {
	t, p := sc.Tenant, sc.Project
	if t == "" {
		t = DefaultScope
	}
	if p == "" {
		p = DefaultScope
	}
	return map[string]string{LabelTenant: t, LabelProject: p}
}

// String is "tenant/project" ("tenant/*" for every project).
func (sc Scope) String() string {
	t, p := sc.Tenant, sc.Project
	if t == "" {
		t = DefaultScope
	}
	if p == "" {
		p = "*"
	}
	return t + "/" + p
}

type createScopeKey struct{}

// WithCreateScope returns ctx under which a commit that creates a session
// places it in sc, in the commit's own transaction (so the session is
// never seen outside its scope). Without it a new session is born in its
// first stored parent's scope, or in DefaultScope.
func WithCreateScope(ctx context.Context, sc Scope) context.Context {
	return context.WithValue(ctx, createScopeKey{}, sc)
}

// CreateScope is the scope WithCreateScope gave ctx, if any.
func CreateScope(ctx context.Context) (Scope, bool) {
	sc, ok := ctx.Value(createScopeKey{}).(Scope)
	return sc, ok
}

// SystemScope holds the runtime's own sessions: tokens, audit lanes,
// workers, schedules, webhooks, run ledgers and journals. No principal
// acts in it (its names are not valid tenant names), so no scoped view
// ever shows them; the runtime reads them through the store itself.
var SystemScope = Scope{Tenant: "~system", Project: "~system"}
