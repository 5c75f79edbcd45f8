package osfake

import (
	"net/http"

	"github.com/openrath/rath/sandbox/remote/remotefake"
)

// Fault is a failure the fake serves instead of answering. Its Path is a
// prefix of the route: for the lifecycle API the URL path after /v1 (e.g.
// "/sandboxes"), for execd the path after /sandboxes/ID/port/44772 (e.g.
// "/command", "/files/download"). A refusal's body is an ErrorResponse;
// CutAfter applies to command streams, counts bytes of the event stream,
// and kills the command.
//
// Requests and Handling (the embedded ledger) take prefixes of the whole
// URL path: "/v1/sandboxes" counts lifecycle requests about sandboxes,
// "/sandboxes/ID/port/44772/command" a sandbox's commands.
type Fault = remotefake.Fault

// Inject adds a fault.
func (s *Server) Inject(f Fault) { s.faults.Inject(f) }

// fault counts the request and returns the refusal fault that hits its
// route.
func (s *Server) fault(r *http.Request, route string) *Fault {
	s.Arrived(r.URL.Path)
	return s.faults.Refusal(r.Method, route)
}

// cut returns the byte count after which the request's stream breaks, or 0.
func (s *Server) cut(method, route string) int { return s.faults.Cut(method, route) }

// refuse serves a refusal fault.
func refuse(w http.ResponseWriter, f *Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	apiError(w, f.Status, "OSFAKE::INJECTED_FAULT", "injected: "+http.StatusText(f.Status))
}
