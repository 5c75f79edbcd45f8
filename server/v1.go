package server

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/openrath/rath/api"
	"github.com/openrath/rath/auth"
)

// v1Route is one operation of the /v1 API. The table is the one source of
// the routes the server registers and of the paths the contract test
// compares with the OpenAPI document (api/openapi.json).
type v1Route struct {
	method, path string
	// grant is what a principal needs to call it (auth.Grants).
	grant  string
	handle func(*Server, http.ResponseWriter, *http.Request)
}

// v1Routes are the operations of /v1.
var v1Routes = []v1Route{
	{"GET", "/v1/sessions", "session.read", (*Server).v1Sessions},
	{"GET", "/v1/sessions/{id}", "session.read", (*Server).v1Session},
	{"GET", "/v1/sessions/{id}/chunks", "session.read", (*Server).v1Chunks},
	{"GET", "/v1/sessions/{id}/graph", "session.read", (*Server).v1Graph},
	{"GET", "/v1/sessions/{id}/export", "session.read", (*Server).v1Export},
	{"GET", "/v1/sessions/{id}/events", "session.read", (*Server).v1SessionEvents},
	{"GET", "/v1/sessions/{id}/dossier", "session.read", (*Server).v1Dossier},
	{"POST", "/v1/sessions/{id}/fork", "session.write", (*Server).v1Fork},
	{"POST", "/v1/sessions:import", "session.write", (*Server).v1Import},
	{"GET", "/v1/sessions:compare", "session.read", (*Server).v1Compare},
	{"POST", "/v1/sessions:merge", "session.write", (*Server).v1Merge},
	{"GET", "/v1/cluster", "cluster.read", (*Server).v1Cluster},
	{"GET", "/v1/cluster/events", "cluster.read", (*Server).v1ClusterEvents},
	{"POST", "/v1/runs", "run.create", (*Server).v1CreateRun},
	{"GET", "/v1/runs", "run.read", (*Server).v1Runs},
	{"GET", "/v1/runs/{id}", "run.read", (*Server).v1Run},
	{"GET", "/v1/runs/{id}/events", "run.read", (*Server).v1RunEvents},
	{"POST", "/v1/runs/{id}/cancel", "run.cancel", (*Server).v1Cancel},
	{"POST", "/v1/runs/{id}/resume", "run.resume", (*Server).v1Resume},
	{"POST", "/v1/runs/{id}/review", "run.review", (*Server).v1Review},
	{"GET", "/v1/approvals", "approval.read", (*Server).v1Approvals},
	{"POST", "/v1/approvals/{id}", "approval.decide", (*Server).v1Decide},
	{"GET", "/v1/workers", "cluster.read", (*Server).v1Workers},
	{"GET", "/v1/queues", "cluster.read", (*Server).v1Queues},
	{"GET", "/v1/schedules", "schedule.read", (*Server).v1Schedules},
	{"POST", "/v1/schedules", "schedule.write", (*Server).v1AddSchedule},
	{"POST", "/v1/schedules/{name}/pause", "schedule.write", (*Server).v1PauseSchedule},
	{"POST", "/v1/schedules/{name}/resume", "schedule.write", (*Server).v1ResumeSchedule},
	{"DELETE", "/v1/schedules/{name}", "schedule.write", (*Server).v1RemoveSchedule},
	{"GET", "/v1/webhooks", "webhook.read", (*Server).v1Webhooks},
	{"POST", "/v1/webhooks", "webhook.write", (*Server).v1AddWebhook},
	{"DELETE", "/v1/webhooks/{id}", "webhook.write", (*Server).v1RemoveWebhook},
	{"GET", "/v1/webhooks/{id}/deliveries", "webhook.read", (*Server).v1Deliveries},
}

// v1 is the handler of /v1: the routes, a JSON 405 for a route's other
// methods and a JSON 404 for everything else, behind guardV1.
func (s *Server) v1() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range v1Routes {
		op := rt.method + " " + rt.path
		mux.HandleFunc(op, s.metrics.observe(op, strings.HasSuffix(rt.path, "/events"), func(w http.ResponseWriter, r *http.Request) {
			if s.authorize(w, r, rt.grant) {
				rt.handle(s, w, r)
			}
		}))
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for path, methods := range allowed {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			for _, m := range methods {
				w.Header().Add("Allow", m)
			}
			v1Errorf(w, r, http.StatusMethodNotAllowed, "%s %s is not allowed; use %v.", r.Method, r.URL.Path, methods)
		})
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		v1Errorf(w, r, http.StatusNotFound, "There is no /v1 operation at %s (see /openapi.json).", r.URL.Path)
	})
	return s.guardV1(mux)
}

// guardV1 enforces the access rules (the bearer token when the server has
// one, else a loopback Host), with /v1's errors; admits POST
// bodies that are JSON or NDJSON (neither is a type a cross-site form can
// send without a CORS preflight, which this server never approves); and
// bounds every body (Options.MaxBody).
func (s *Server) guardV1(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := auth.BearerToken(r.Header.Get("Authorization")); !ok && s.hostGuarded() && !loopbackHost(r.Host) {
			v1Errorf(w, r, http.StatusForbidden, "Host %q is not a loopback name; this server answers only local requests.", r.Host)
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.auditAuthFailed(r, err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="rath"`)
			if !errors.Is(err, auth.ErrUnauthenticated) {
				v1Fail(w, r, err) // the store could not say
				return
			}
			v1Errorf(w, r, http.StatusUnauthorized, "%s", sentence(err.Error()))
			return
		}
		r = r.WithContext(s.withView(context.WithValue(r.Context(), principalKey{}, p), p))
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || (mt != "application/json" && mt != "application/x-ndjson") {
				v1Errorf(w, r, http.StatusUnsupportedMediaType, "POST requests need Content-Type: application/json (or application/x-ndjson for an import).")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		h.ServeHTTP(w, r)
	})
}

// handleOpenAPI answers GET /openapi.json: the API's contract.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write(api.OpenAPI)
}
