package e2bfake

import (
	"net/http"

	"github.com/openrath/rath/sandbox/remote/remotefake"
)

// Fault is a failure the fake serves instead of answering. Its Path is a
// prefix of the URL path, e.g. "/sandboxes", "/process.Process/Start",
// "/files"; a refusal's body is the API's {code, message}; CutAfter
// applies to process streams and counts bytes of output.
type Fault = remotefake.Fault

// Inject adds a fault.
func (s *Server) Inject(f Fault) { s.faults.Inject(f) }

// fault counts the request and returns the refusal fault that hits it.
func (s *Server) fault(r *http.Request) *Fault {
	s.Arrived(r.URL.Path)
	return s.faults.Refusal(r.Method, r.URL.Path)
}

// cut returns the byte count after which the request's stream breaks, or 0.
func (s *Server) cut(r *http.Request) int { return s.faults.Cut(r.Method, r.URL.Path) }

// refuse serves a refusal fault.
func refuse(w http.ResponseWriter, f *Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	writeJSON(w, f.Status, map[string]any{"code": f.Status, "message": "injected: " + http.StatusText(f.Status)})
}
