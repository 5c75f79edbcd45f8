package e2bfake

import (
	"net/http"
	"strings"
	"time"
)

// Fault is a failure the fake serves instead of answering.
type Fault struct {
	// Method (empty: any) and Path (a prefix of the URL path, e.g.
	// "/sandboxes", "/process.Process/Start", "/files") select requests.
	Method, Path string
	// Status is the refusal's HTTP status (with a {code, message} body),
	// and RetryAfter its Retry-After header.
	Status     int
	RetryAfter string
	// CutAfter, for process streams: answer normally, then break the
	// connection once this many bytes of output were sent.
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

// Requests is how many requests the fake has seen whose path starts with
// prefix.
func (s *Server) Requests(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, c := range s.counts {
		if strings.HasPrefix(p, prefix) {
			n += c
		}
	}
	return n
}

// Handling is the time the fake spent on the requests whose path starts
// with prefix, each from its arrival in ServeHTTP until its handler
// returned (a process stream's handler returns after the end-stream
// message is written), and how many requests that covers. A request is
// counted by Requests when it arrives and here when it is done, so the two
// counts agree once no such request is in flight. Benchmarks subtract it
// from a call's wall time to get the client's own cost.
func (s *Server) Handling(prefix string) (spent time.Duration, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, d := range s.spent {
		if strings.HasPrefix(p, prefix) {
			spent += d
			n += s.handled[p]
		}
	}
	return spent, n
}

// took adds a request's time in ServeHTTP to its path's.
func (s *Server) took(path string, start time.Time) {
	d := time.Since(start)
	s.mu.Lock()
	s.spent[path] += d
	s.handled[path]++
	s.mu.Unlock()
}

// fault counts the request and returns the refusal fault that hits it.
func (s *Server) fault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[r.URL.Path]++
	for i, f := range s.faults {
		if f.CutAfter > 0 || !f.matches(r) {
			continue
		}
		if f.Times--; f.Times <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return f
	}
	return nil
}

// cut returns the byte count after which the request's stream breaks, or 0.
func (s *Server) cut(r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.CutAfter == 0 || !f.matches(r) {
			continue
		}
		if f.Times--; f.Times <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return f.CutAfter
	}
	return 0
}

func (f *Fault) matches(r *http.Request) bool {
	return (f.Method == "" || f.Method == r.Method) && strings.HasPrefix(r.URL.Path, f.Path)
}

func (f *Fault) apply(w http.ResponseWriter) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	writeJSON(w, f.Status, map[string]any{"code": f.Status, "message": "injected: " + http.StatusText(f.Status)})
}
