package osfake

import (
	"net/http"
	"strings"
)

// Fault is a failure the fake serves instead of answering.
type Fault struct {
	// Method (empty: any) and Path select requests. Path is a prefix of
	// the route: for the lifecycle API the URL path after /v1 (e.g.
	// "/sandboxes"), for execd the path after /sandboxes/ID/port/44772
	// (e.g. "/command", "/files/download").
	Method, Path string
	// Status is the refusal's HTTP status (with an ErrorResponse body),
	// and RetryAfter its Retry-After header.
	Status     int
	RetryAfter string
	// CutAfter, for command streams: answer normally, then break the
	// connection once this many bytes of the event stream were sent, and
	// kill the command.
	CutAfter int
	// Times is how many requests the fault hits (0: one).
	Times int
}

// Inject adds a fault.
func (s *Server) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	s.faults = append(s.faults, &f)
	s.mu.Unlock()
}

// fault counts the request and returns the refusal fault that hits its
// route.
func (s *Server) fault(r *http.Request, route string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[r.URL.Path]++
	return s.take(r.Method, route, false)
}

// cut returns the byte count after which the request's stream breaks, or 0.
func (s *Server) cut(method, route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.take(method, route, true); f != nil {
		return f.CutAfter
	}
	return 0
}

// take finds and spends the first matching fault of the kind (refusal or
// cut). s.mu is held.
func (s *Server) take(method, route string, cut bool) *Fault {
	for i, f := range s.faults {
		if (f.CutAfter > 0) != cut || (f.Method != "" && f.Method != method) || !strings.HasPrefix(route, f.Path) {
			continue
		}
		if f.Times--; f.Times <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return f
	}
	return nil
}

func (f *Fault) apply(w http.ResponseWriter) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	apiError(w, f.Status, "OSFAKE::INJECTED_FAULT", "injected: "+http.StatusText(f.Status))
}
