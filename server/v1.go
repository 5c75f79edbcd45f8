package server

import (
	"mime"
	"net/http"
	"strings"

	"github.com/openrath/rath/api"
)

// v1Route is one operation of the /v1 API. The table is the one source of
// the routes the server registers and of the paths the contract test
// compares with the OpenAPI document (api/openapi.json).
type v1Route struct {
	method, path string
	handle       func(*Server, http.ResponseWriter, *http.Request)
}

// v1Routes are the operations of /v1.
var v1Routes = []v1Route{
	{"GET", "/v1/sessions", (*Server).v1Sessions},
	{"GET", "/v1/sessions/{id}", (*Server).v1Session},
	{"GET", "/v1/sessions/{id}/chunks", (*Server).v1Chunks},
	{"GET", "/v1/sessions/{id}/graph", (*Server).v1Graph},
	{"GET", "/v1/sessions/{id}/export", (*Server).v1Export},
	{"GET", "/v1/sessions/{id}/events", (*Server).v1SessionEvents},
	{"GET", "/v1/sessions/{id}/dossier", (*Server).v1Dossier},
	{"POST", "/v1/sessions/{id}/fork", (*Server).v1Fork},
	{"POST", "/v1/sessions:import", (*Server).v1Import},
	{"GET", "/v1/sessions:compare", (*Server).v1Compare},
	{"POST", "/v1/sessions:merge", (*Server).v1Merge},
	{"GET", "/v1/cluster", (*Server).v1Cluster},
	{"GET", "/v1/cluster/events", (*Server).v1ClusterEvents},
	{"POST", "/v1/runs", (*Server).v1CreateRun},
	{"GET", "/v1/runs", (*Server).v1Runs},
	{"GET", "/v1/runs/{id}", (*Server).v1Run},
	{"GET", "/v1/runs/{id}/events", (*Server).v1RunEvents},
	{"POST", "/v1/runs/{id}/cancel", (*Server).v1Cancel},
	{"POST", "/v1/runs/{id}/resume", (*Server).v1Resume},
	{"POST", "/v1/runs/{id}/review", (*Server).v1Review},
	{"GET", "/v1/approvals", (*Server).v1Approvals},
	{"POST", "/v1/approvals/{id}", (*Server).v1Decide},
	{"GET", "/v1/workers", (*Server).v1Workers},
	{"GET", "/v1/queues", (*Server).v1Queues},
	{"GET", "/v1/schedules", (*Server).v1Schedules},
	{"POST", "/v1/schedules", (*Server).v1AddSchedule},
	{"POST", "/v1/schedules/{name}/pause", (*Server).v1PauseSchedule},
	{"POST", "/v1/schedules/{name}/resume", (*Server).v1ResumeSchedule},
	{"DELETE", "/v1/schedules/{name}", (*Server).v1RemoveSchedule},
	{"GET", "/v1/webhooks", (*Server).v1Webhooks},
	{"POST", "/v1/webhooks", (*Server).v1AddWebhook},
	{"DELETE", "/v1/webhooks/{id}", (*Server).v1RemoveWebhook},
	{"GET", "/v1/webhooks/{id}/deliveries", (*Server).v1Deliveries},
}

// v1 is the handler of /v1: the routes, a JSON 405 for a route's other
// methods and a JSON 404 for everything else, behind guardV1.
func (s *Server) v1() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range v1Routes {
		op := rt.method + " " + rt.path
		mux.HandleFunc(op, s.metrics.observe(op, strings.HasSuffix(rt.path, "/events"), func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) }))
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
		if s.token != "" {
			if !s.authorized(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="rath"`)
				v1Errorf(w, r, http.StatusUnauthorized, "This server needs the header \"Authorization: Bearer <token>\" with its token.")
				return
			}
		} else if !loopbackHost(r.Host) {
			v1Errorf(w, r, http.StatusForbidden, "Host %q is not a loopback name; this server answers only local requests.", r.Host)
			return
		}
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
