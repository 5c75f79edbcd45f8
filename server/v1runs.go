package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// controlTimeout bounds a run's submission or control (cancel, resume,
// review, verdict). It runs detached from the request: a client that goes
// away does not cut one in half.
const controlTimeout = 30 * time.Second

// v1RunPage is the body of GET /v1/runs and GET /v1/approvals.
type v1RunPage struct {
	Items      []RunView `json:"items"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// v1Items is the body of a list that is not paged (workers, queues).
type v1Items struct {
	Items any `json:"items"`
}

// needRuns answers 503 when the server has no cluster and reports whether
// it did.
func (s *Server) needRuns(w http.ResponseWriter, r *http.Request) bool {
	if s.runs != nil {
		return true
	}
	writeV1Error(w, r, http.StatusServiceUnavailable, codeNoCluster, "This server has no cluster (it was started with --no-cluster), so it has no runs, approvals, workers or queues.")
	return false
}

// v1Runs answers GET /v1/runs?state=&workflow=&since=&until=&cursor=&limit=:
// the runs, newest first, in keyset pages as /v1/sessions.
func (s *Server) v1Runs(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.runPage(w, r, "runs", s.runs.ListRuns)
	}
}

// v1Approvals answers GET /v1/approvals?workflow=&since=&until=&cursor=
// &limit=: the runs waiting for a verdict, each with the session it paused
// with, that session's head and what is asked.
func (s *Server) v1Approvals(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("state") {
		v1Errorf(w, r, http.StatusBadRequest, "Approvals have no state filter: every one listed waits for a verdict.")
		return
	}
	if s.needRuns(w, r) {
		s.runPage(w, r, "approvals", s.runs.Approvals)
	}
}

// runPage answers a list of runs read by list.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request, name string, list func(context.Context, RunQuery) ([]RunView, error)) {
	q := r.URL.Query()
	rq, err := runQuery(q)
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	fetch := func(until time.Time, limit int) ([]RunView, error) {
		rq.Until, rq.Limit, rq.Scope = until, limit, scopeIn(r.Context())
		return list(r.Context(), rq)
	}
	items, next, err := keysetPage(q, name, rq.Until, fetch, func(v RunView) time.Time { return v.Created })
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v1RunPage{Items: items, NextCursor: next})
}

// runQuery reads a run list's filters: state, workflow, since and until
// (RFC 3339).
func runQuery(q url.Values) (RunQuery, error) {
	rq := RunQuery{State: q.Get("state"), Workflow: q.Get("workflow")}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &rq.Since}, {"until", &rq.Until}} {
		if raw := q.Get(p.name); raw != "" {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return rq, fmt.Errorf("the parameter %s=%q is not an RFC 3339 time", p.name, raw)
			}
			*p.dst = t
		}
	}
	return rq, nil
}

// v1Run answers GET /v1/runs/{id}.
func (s *Server) v1Run(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	v, err := s.runs.Run(r.Context(), scopeIn(r.Context()), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// v1Workers answers GET /v1/workers: every worker that has not ended
// (alive or taken for dead, and why), then the latest that ended.
func (s *Server) v1Workers(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.items(w, r, clusterWide(s.runs.Workers))
	}
}

// v1Queues answers GET /v1/queues: the pools, each with what its workers
// offer and serve and how many runs it has queued and running.
func (s *Server) v1Queues(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.items(w, r, clusterWide(s.runs.Queues))
	}
}

func (s *Server) items(w http.ResponseWriter, r *http.Request, get func(context.Context, store.Scope) (any, error)) {
	items, err := get(r.Context(), scopeIn(r.Context()))
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v1Items{Items: items})
}

// clusterWide is a cluster-wide list as items takes it: the cluster's own
// state, the same in every scope.
func clusterWide(get func(context.Context) (any, error)) func(context.Context, store.Scope) (any, error) {
	return func(ctx context.Context, _ store.Scope) (any, error) { return get(ctx) }
}

// detached is the context a submission or control runs under: the
// request's values, not its cancellation, bounded by controlTimeout.
func detached(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), controlTimeout)
}

// actor is who a control, review or verdict records as acting: the
// authenticated principal ("token:tok_…", "oidc:…", "local:local"), and
// beside it, in parentheses, the display name the body's "by" gives, if
// any. A caller cannot record another's name in place of its own.
func actor(r *http.Request, by string) (string, error) {
	by = strings.TrimSpace(by)
	switch {
	case len(by) > maxBy:
		return "", fmt.Errorf("\"by\" is longer than %d bytes", maxBy)
	case strings.ContainsFunc(by, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return "", fmt.Errorf("\"by\" must be printable text")
	}
	who := principalName(principalOf(r.Context()))
	switch {
	case who == "":
		who = "api"
	case by != "" && by != who:
		who += " (" + by + ")"
	}
	return who, nil
}

// sendRun answers a control of run id with the run as it is now.
func (s *Server) sendRun(ctx context.Context, w http.ResponseWriter, r *http.Request, status int, id session.ID) {
	v, err := s.runs.Run(ctx, scopeIn(ctx), id)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, status, v)
}
