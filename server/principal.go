package server

import (
	"context"
	"errors"
	"log"
	"net/http"
	"strings"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Every /v1 request acts for a principal (auth.Principal): the one its
// bearer credential names — the server's own token (Options.Token: an
// administrator), a token of the store (Options.Tokens), or another
// authenticator's (Options.Authenticators: OIDC) — or, with no credential,
// the implicit local principal of a server that listens on loopback only
// and has no token of its own, asked under a loopback name, while the
// store holds no token. Each route
// names the grant it needs (v1Route.grant); a principal without it is
// refused with 403, naming the grant. Failed authentications (within
// bounds per source: authfail.go) and every grant decision go to the
// audit log (Options.Audit), when there is one.

type principalKey struct{}

// principalOf is the principal r acts for (set by guardV1).
func principalOf(ctx context.Context) auth.Principal {
	p, _ := ctx.Value(principalKey{}).(auth.Principal)
	return p
}

// staticPrincipal is who the server's own token (Options.Token) acts for.
func staticPrincipal() auth.Principal {
	return auth.Principal{ID: "static", Kind: auth.KindStatic, Name: "the server's token", Tenant: auth.DefaultScope, Project: auth.DefaultScope, Grants: []string{auth.Admin}}
}

// authenticators are the server's: its own token first, then the store's
// tokens, then the others given.
func authenticators(o Options) auth.Authenticator {
	var as []auth.Authenticator
	if o.Token != "" {
		as = append(as, auth.Static(o.Token, staticPrincipal()))
	}
	if o.Tokens != nil {
		as = append(as, o.Tokens)
	}
	return auth.Chain(append(as, o.Authenticators...)...)
}

// authenticate is the principal r acts for, or an error wrapping
// auth.ErrUnauthenticated.
func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	ctx := r.Context()
	if bearer, ok := auth.BearerToken(r.Header.Get("Authorization")); ok {
		return s.auth.Authenticate(ctx, bearer)
	}
	if s.local && s.token == "" && loopbackHost(r.Host) {
		if s.tokens == nil {
			return auth.Local(), nil
		}
		p, ok, err := s.tokens.Implicit(ctx, true)
		if err != nil {
			return auth.Principal{}, err
		}
		if ok {
			return p, nil
		}
	}
	return auth.Principal{}, errNoCredential
}

// errNoCredential: a request without a credential where one is needed.
var errNoCredential = errors.Join(auth.ErrUnauthenticated, errors.New("this server needs the header \"Authorization: Bearer <token>\""))

// authorize is nil when r's principal holds grant; else it answers 403
// naming the grant. Either way the decision is audited.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, grant string) bool {
	p := principalOf(r.Context())
	err := auth.Require(p, grant)
	outcome, reason := audit.OutcomeAllowed, ""
	if err != nil {
		outcome, reason = audit.OutcomeDenied, err.Error()
	}
	s.audit(r, audit.Record{Kind: audit.KindGrant, Principal: principalName(p), Tenant: p.Tenant, Project: p.Project,
		Action: grant, Resource: r.Method + " " + r.URL.Path, Outcome: outcome, Reason: reason})
	if err != nil {
		v1Errorf(w, r, http.StatusForbidden, "%s", sentence(err.Error()))
		return false
	}
	return true
}

// audit appends rec to the audit log, if the server keeps one, with the
// request's id. A record that cannot be written is logged: the request
// goes on (the store that refused it answers the request too).
func (s *Server) audit(r *http.Request, rec audit.Record) {
	if s.auditLog == nil {
		return
	}
	rec.RequestID = requestID(r)
	for _, f := range []*string{&rec.Reason, &rec.Resource, &rec.Action} {
		*f = clip(*f, audit.MaxField)
	}
	if err := s.auditLog.Append(context.WithoutCancel(r.Context()), rec); err != nil {
		log.Printf("server: audit: %v", err)
	}
}

// principalName is how the audit log names p: kind and id.
func principalName(p auth.Principal) string {
	if p.Kind == "" {
		return ""
	}
	return p.Kind + ":" + p.ID
}

// auditControl records an act of run control (a cancel, a resume, a
// review, a verdict) on run id: what was asked, and how it ended.
func (s *Server) auditControl(r *http.Request, action string, id session.ID, detail string, err error) {
	p := principalOf(r.Context())
	rec := audit.Record{Kind: audit.KindRunControl, Principal: principalName(p), Tenant: p.Tenant, Project: p.Project,
		Action: action, Resource: "run/" + string(id), Outcome: audit.OutcomeOK, Reason: detail}
	if err != nil {
		rec.Outcome, rec.Reason = audit.OutcomeFailed, detail+" ("+err.Error()+")"
	}
	s.audit(r, rec)
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// Every /v1 request reads and writes the store through a view confined to
// its principal's tenant and project (store.Scoped): another scope's
// sessions are not found, a session it creates is born in its scope.

type viewKey struct{}

// scopeOf is the scope principal p acts in.
func scopeOf(p auth.Principal) store.Scope {
	return store.Scope{Tenant: p.Tenant, Project: p.Project}
}

// withView returns ctx carrying the store view of principal p.
func (s *Server) withView(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, viewKey{}, store.Scoped(s.st, scopeOf(p)))
}

// storeOf is the store as the principal of ctx sees it. A context without
// one (no request passed guardV1) sees nothing.
func (s *Server) storeOf(ctx context.Context) store.Store {
	if v, ok := ctx.Value(viewKey{}).(store.Store); ok {
		return v
	}
	return store.Scoped(s.st, store.Scope{Tenant: noScope})
}

// noScope is a tenant no session is in (auth.CheckScope refuses it).
const noScope = "\x00none"

// scopeIn is the scope the principal of ctx acts in (a scope nothing is
// in when ctx has none).
func scopeIn(ctx context.Context) store.Scope {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	if !ok {
		return store.Scope{Tenant: noScope}
	}
	return scopeOf(p)
}
