package server

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/openrath/rath/auth"
)

// Default bounds on the /v1 event streams open at once, unless Options say
// otherwise: on the whole server, for one tenant, for one principal. A
// tenant (or one of its tokens) that opens streams until it is refused
// leaves the rest of the server's to the others.
const (
	DefaultMaxSubscribers             = 1000
	DefaultMaxSubscribersPerTenant    = 250
	DefaultMaxSubscribersPerPrincipal = 64
)

// streamLimits counts the open event streams, on the whole server, by
// tenant and by principal.
type streamLimits struct {
	server, tenant, principal int64

	mu          sync.Mutex
	byTenant    map[string]int64
	byPrincipal map[string]int64
}

func newStreamLimits(o Options) *streamLimits {
	l := &streamLimits{server: o.MaxSubscribers, tenant: o.MaxSubscribersPerTenant, principal: o.MaxSubscribersPerPrincipal,
		byTenant: map[string]int64{}, byPrincipal: map[string]int64{}}
	if l.server <= 0 {
		l.server = DefaultMaxSubscribers
	}
	if l.tenant <= 0 {
		l.tenant = DefaultMaxSubscribersPerTenant
	}
	if l.principal <= 0 {
		l.principal = DefaultMaxSubscribersPerPrincipal
	}
	return l
}

// subscribe counts a new event stream of the request's principal, or
// answers 429 naming the limit it would pass (reason streams_server,
// streams_tenant or streams_principal) and reports that it did not. The
// caller calls release when the stream ends.
func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	p := principalOf(r.Context())
	l := s.streams
	pk := p.Kind + ":" + p.ID
	l.mu.Lock()
	reason, msg := "", ""
	switch {
	case s.subscribers.Load() >= l.server:
		reason, msg = "streams_server", fmt.Sprintf("This server holds %d event streams already, its limit; try again later.", l.server)
	case l.byTenant[p.Tenant] >= l.tenant:
		reason, msg = "streams_tenant", fmt.Sprintf("Tenant %q holds %d event streams on this server already, a tenant's limit; close some first.", p.Tenant, l.tenant)
	case l.byPrincipal[pk] >= l.principal:
		reason, msg = "streams_principal", fmt.Sprintf("This %s holds %d event streams on this server already, a principal's limit; close some first.", principalWord(p), l.principal)
	}
	if reason != "" {
		l.mu.Unlock()
		writeV1Error(w, r, http.StatusTooManyRequests, reason, msg)
		return nil, false
	}
	s.subscribers.Add(1)
	l.byTenant[p.Tenant]++
	l.byPrincipal[pk]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			s.subscribers.Add(-1)
			if l.byTenant[p.Tenant]--; l.byTenant[p.Tenant] <= 0 {
				delete(l.byTenant, p.Tenant)
			}
			if l.byPrincipal[pk]--; l.byPrincipal[pk] <= 0 {
				delete(l.byPrincipal, pk)
			}
		})
	}, true
}

// principalWord names p's kind for a message: "token", "identity", ...
func principalWord(p auth.Principal) string {
	switch p.Kind {
	case auth.KindToken:
		return "token"
	case auth.KindOIDC:
		return "identity"
	}
	return "principal"
}
