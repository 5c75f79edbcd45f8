package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/openrath/rath/store"
)

// Cluster is what the cluster page needs of the Agent Cluster; package cli
// gives an adapter over cluster.Cluster (server cannot import it). Verdicts
// on approvals go through Runs (POST /v1/approvals/{id}).
type Cluster interface {
	// Status is the cluster's state as JSON-encodable data (cluster.Report).
	Status(ctx context.Context) (any, error)
}

// How the cluster's event stream paces itself (Server fields, so tests can
// change them).
const (
	// clusterCoalesce is the least time between two status events: a burst
	// of commits becomes one status.
	clusterCoalesce = 250 * time.Millisecond
	// clusterPoll is the most time between two status events: the status
	// holds workers' heartbeats, label writes the store does not notify
	// on PostgreSQL, so the stream also polls.
	clusterPoll = 2 * time.Second
	// clusterStatusTimeout bounds one Status call of the stream, so a store
	// that hangs does not silence the stream's heartbeat for good.
	clusterStatusTimeout = 15 * time.Second
)

// codeNoCluster is the reason of the cluster operations' 503 on a server
// without a cluster.
const codeNoCluster = "no_cluster"

// maxBy bounds the length of who decides.
const maxBy = 200

// clusterStream writes the cluster's status events to out until the client
// goes, the server shuts down or the store stops watching:
//
//	event: status   data: <the Status JSON>   at once, then after commits and at least every clusterPoll
//	event: error    data: errBody(err)        when Status fails (the stream goes on and tries again)
//	event: end      data: {"reason": ...}     when the server shuts down or the store stops watching
//
// and a comment line every heartbeat. A commit the store reports (events,
// its Watch) brings a new status, but at most one every clusterCoalesce, so
// a burst of commits is one status.
func (s *Server) clusterStream(ctx context.Context, out *tailStream, events <-chan store.Event, errBody func(error) any) {
	var last time.Time // when the last status went out
	poll := time.NewTimer(s.clusterPoll)
	defer poll.Stop()
	soon := time.NewTimer(time.Hour) // a status owed to commits
	soon.Stop()
	defer soon.Stop()
	owed := false
	send := func() error {
		sctx, cancel := context.WithTimeout(ctx, clusterStatusTimeout)
		rep, err := s.cluster.Status(sctx)
		cancel()
		last = time.Now()
		poll.Reset(s.clusterPoll)
		if owed {
			soon.Stop()
			owed = false
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return out.event("error", "", errBody(err))
		}
		return out.event("status", "", rep)
	}
	if send() != nil {
		return
	}
	hb := time.NewTicker(s.heartbeat)
	defer hb.Stop()
	stop := stopping(ctx)
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-stop:
			_ = out.event("end", "", map[string]string{"reason": "the server is shutting down"})
			return
		case <-hb.C:
			err = out.write(": keep-alive\n\n")
		case _, ok := <-events:
			if !ok {
				_ = out.event("end", "", map[string]string{"reason": "the store stopped delivering commits"})
				return
			}
			// Any commit may be a run's or a worker's (and a watcher that
			// missed events has missed those too): a status is owed, no
			// sooner than clusterCoalesce after the last one.
			if !owed {
				owed = true
				soon.Reset(max(0, s.clusterCoalesce-time.Since(last)))
			}
		case <-soon.C:
			owed = false
			err = send()
		case <-poll.C:
			err = send()
		}
		if err != nil {
			return
		}
	}
}

// health answers the probes, outside /v1 and without the token:
//
//	GET /health/live    200 {"status": "live"} while the process serves
//	GET /health/ready   200 {"status": "ready"} when the store answers a
//	                    one-session list within 2 s; else 503
//	                    {"status": "unready", "why": ...}
//
// They sit behind guardHost, as the viewer does: without a token the
// server listens on loopback only, so every real probe reaches it with a
// loopback Host (curl http://127.0.0.1:7474/health/ready), and refusing
// other Hosts keeps a DNS-rebinding page from reading even this; with a
// token the server may be public, and a load balancer's or a kubelet's
// probe carries no token and any Host (the pod's IP), so both are open.
// What they say is what a probe needs; the store's own error text (which
// may name hosts or paths) goes only to callers with the token, or to
// loopback callers of a server without one.
func (s *Server) health() http.Handler {
	mux := http.NewServeMux()
	route(mux, "GET", "/health/live", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, healthBody{Status: "live"})
	})
	route(mux, "GET", "/health/ready", s.handleReady)
	mux.HandleFunc("/health/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "There is no health endpoint at %s (there are /health/live and /health/ready).", r.URL.Path)
	})
	return mux
}

// healthBody is the body of a health answer.
type healthBody struct {
	Status string `json:"status"`
	Why    string `json:"why,omitempty"`
}

// readyTimeout bounds the store check of /health/ready.
const readyTimeout = 2 * time.Second

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	select {
	case <-stopping(r.Context()):
		writeJSON(w, http.StatusServiceUnavailable, healthBody{Status: "unready", Why: "the server is shutting down"})
		return
	default:
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if _, err := s.st.List(ctx, store.Filter{Limit: 1}); err != nil {
		why := "the store does not answer"
		if errors.Is(err, context.DeadlineExceeded) {
			why += " within " + readyTimeout.String()
		}
		if p, aerr := s.authenticate(r); aerr == nil && p.Allows("cluster.read") {
			why += ": " + err.Error() // the store's words are for operators
		}
		writeJSON(w, http.StatusServiceUnavailable, healthBody{Status: "unready", Why: why})
		return
	}
	writeJSON(w, http.StatusOK, healthBody{Status: "ready"})
}
