package server

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/store"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultAddr is the address the server listens on when Options.Addr is
// empty: loopback only.
const DefaultAddr = "127.0.0.1:7474"

// ErrNoToken is returned by New (and Serve) for a non-loopback address
// without a way to authenticate requests: the server's token, the store's
// tokens or an identity provider.
var ErrNoToken = errors.New("server: a non-loopback address needs a token (the server's own, the store's, or an identity provider's)")

// Options configure New.
type Options struct {
	// Addr is the TCP address ListenAndServe listens on (DefaultAddr if
	// empty).
	Addr string
	// Token is the bearer token every /v1 request must carry. It is
	// required unless Addr is a loopback address.
	Token string
	// Cluster, if set, gives /v1 the cluster's status (GET /v1/cluster and
	// its event stream), which the viewer's cluster page shows; without it
	// they answer 503 (reason no_cluster).
	Cluster Cluster
	// RiverUI, if set, is River's own UI (see cluster.RiverUI), served
	// under /river/ by a server without a token: its page calls its API
	// without this server's bearer token, so a server that needs one
	// answers /river/ with 404 and says why.
	RiverUI http.Handler
	// Runs, if set, gives /v1 its runs, approvals, workers and queues;
	// without it they answer 503 (reason no_cluster).
	Runs Runs
	// MaxQueuedRuns bounds a tenant's runs waiting to be worked: a
	// submission past it is refused with 429 (DefaultMaxQueuedRuns if
	// zero).
	MaxQueuedRuns int
	// Collectors are more metrics GET /metrics serves (the cluster's).
	Collectors []prometheus.Collector
	// MaxBody bounds a /v1 request body (DefaultMaxBody if zero).
	MaxBody int64
	// MaxSubscribers bounds the /v1 event streams open at once
	// (DefaultMaxSubscribers if zero); MaxSubscribersPerTenant those of
	// one tenant (DefaultMaxSubscribersPerTenant), and
	// MaxSubscribersPerPrincipal those of one principal
	// (DefaultMaxSubscribersPerPrincipal). A stream past one is 429,
	// naming it.
	MaxSubscribers, MaxSubscribersPerTenant, MaxSubscribersPerPrincipal int64
	// Tokens, if set, are the store's tokens: they authenticate requests,
	// and once the store holds one, a request without a credential is
	// refused on loopback too (see principal.go).
	Tokens *auth.Tokens
	// Authenticators are more ways to authenticate a bearer credential
	// (OIDC), tried after the server's token and the store's tokens.
	Authenticators []auth.Authenticator
	// Audit, if set, is where failed authentications (within bounds per
	// source: see authfail.go) and grant decisions are recorded.
	Audit *audit.Log
}

// DefaultMaxBody is the largest /v1 request body a server takes unless
// Options.MaxBody says otherwise: 1 MiB.
const DefaultMaxBody = 1 << 20

// DefaultMaxQueuedRuns is how many runs of one tenant may wait to be
// worked unless Options.MaxQueuedRuns says otherwise.
const DefaultMaxQueuedRuns = 1000

// Server serves the API and the viewer for one store.
type Server struct {
	st    store.Store
	addr  string
	token string
	// heartbeat is how often a tail stream sends a comment to keep proxies
	// and the client's connection alive.
	heartbeat time.Duration
	// cluster is the Agent Cluster the cluster page shows, or nil.
	cluster Cluster
	// runs is the cluster /v1 acts on, or nil; maxQueued bounds a
	// tenant's waiting runs.
	runs      Runs
	maxQueued int
	// riverUI is River's own UI, or nil.
	riverUI http.Handler
	// clusterCoalesce and clusterPoll pace the cluster's event stream:
	// the least and the most time between two status events.
	clusterCoalesce, clusterPoll time.Duration
	// grace is how long Serve waits for requests to finish when its
	// context ends before it closes their connections.
	grace time.Duration
	// maxBody bounds a /v1 request body.
	maxBody int64
	// subscribers counts the open /v1 event streams; streams bounds
	// them (on the server, by tenant, by principal).
	subscribers atomic.Int64
	streams     *streamLimits
	metrics     *metrics
	// chunks is what event streams read chunks through.
	chunks *chunkCache
	// auth authenticates bearer credentials; tokens decide the implicit
	// local principal (nil: always on loopback without a token of the
	// server's own); auditLog records decisions, or is nil.
	auth     auth.Authenticator
	tokens   *auth.Tokens
	auditLog *audit.Log
	// authFails audits failed authentications within bounds (authfail.go).
	authFails *authFailures
	// local: the server listens on loopback only (the implicit local
	// principal needs it: a Host header is the client's to choose).
	local bool
	// credentials: the server can authenticate a request (its token, the
	// store's tokens, an identity provider): it may listen on a public
	// address, where every request needs a credential.
	credentials bool
	h           http.Handler
}

// New returns a server for st. It refuses a non-loopback Addr without a
// Token (ErrNoToken).
func New(st store.Store, o Options) (*Server, error) {
	if st == nil {
		return nil, errors.New("server: no store")
	}
	addr := o.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	loop, err := LoopbackAddr(addr)
	if err != nil {
		return nil, err
	}
	if !loop && o.Token == "" && o.Tokens == nil && len(o.Authenticators) == 0 {
		return nil, fmt.Errorf("%w (address %s)", ErrNoToken, addr)
	}
	s := &Server{
		st: st, addr: addr, token: o.Token, heartbeat: 15 * time.Second, grace: 10 * time.Second,
		cluster: o.Cluster, riverUI: o.RiverUI, clusterCoalesce: clusterCoalesce, clusterPoll: clusterPoll,
		maxBody: o.MaxBody, streams: newStreamLimits(o), runs: o.Runs, maxQueued: o.MaxQueuedRuns,
		auth: authenticators(o), tokens: o.Tokens, auditLog: o.Audit, local: loop,
		credentials: o.Token != "" || o.Tokens != nil || len(o.Authenticators) > 0,
	}
	if o.Audit != nil {
		s.authFails = newAuthFailures(o.Audit)
	}
	if s.maxQueued <= 0 {
		s.maxQueued = DefaultMaxQueuedRuns
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.metrics = newMetrics(s)
	for _, c := range o.Collectors {
		if err := s.metrics.reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: metrics: %w", err)
		}
	}
	s.chunks = newChunkCache(st)
	s.h = s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler: the versioned API under /v1/
// (its contract at /openapi.json), which the viewer reads too, the health
// probes under /health/ and the viewer everywhere else.
func (s *Server) Handler() http.Handler { return s.h }

// routes builds the handler tree.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/", s.v1())
	mux.Handle("GET /openapi.json", s.guardHost(http.HandlerFunc(s.handleOpenAPI)))
	mux.Handle("GET /metrics", s.guardMetrics(s.metrics.handler()))
	mux.Handle("/health/", s.guardHost(s.health())) // no token: see health
	mux.Handle("/river/", s.guardHost(s.river()))
	mux.Handle("/", s.guardHost(viewer()))
	return withRequestID(securityHeaders(crossOrigin(mux)))
}

// river serves River's own UI when it can: it is set, and the server has
// no token (the UI's page calls its API without one).
func (s *Server) river() http.Handler {
	switch {
	case s.riverUI == nil:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "River's UI is not served here (rath serve serves it with the cluster page: without --no-cluster).", http.StatusNotFound)
		})
	case s.token != "":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "River's UI is served only by a server without a token (on a loopback address): its page cannot carry this server's token.", http.StatusNotFound)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Its page carries no credential: it is served only where a
		// request without one acts as the implicit local principal.
		if _, err := s.authenticate(r); err != nil || r.Header.Get("Authorization") != "" {
			http.Error(w, "River's UI is served only on loopback while the store holds no token (its page cannot carry one).", http.StatusNotFound)
			return
		}
		s.riverUI.ServeHTTP(w, r)
	})
}

// route registers h for method and path, and a JSON 405 for the path's
// other methods.
func route(mux *http.ServeMux, method, path string, h http.HandlerFunc) {
	mux.HandleFunc(method+" "+path, h)
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", method)
		writeError(w, http.StatusMethodNotAllowed, "%s %s is not allowed; use %s.", r.Method, r.URL.Path, method)
	})
}

// securityHeaders sets the headers every response carries.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.ServeHTTP(w, r)
	})
}
