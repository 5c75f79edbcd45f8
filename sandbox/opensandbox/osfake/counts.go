package osfake

import (
	"strings"
	"time"
)

// Requests is how many requests the fake has seen whose URL path starts
// with prefix: "/v1/sandboxes" counts lifecycle requests about sandboxes,
// "/sandboxes/ID/port/44772/command" a sandbox's commands.
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

// Handling is the time the fake spent on the requests whose URL path
// starts with prefix, each from its arrival in ServeHTTP until its handler
// returned (a command stream's after its last event, or when it broke),
// and how many requests that covers. A request is counted by Requests
// when it arrives and here when it is done, so the two counts agree once
// no such request is in flight. Benchmarks subtract it from a call's wall
// time to get the client's own cost.
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

func (s *Server) count(path string) {
	s.mu.Lock()
	s.counts[path]++
	s.mu.Unlock()
}

// took adds a request's time in ServeHTTP to its path's.
func (s *Server) took(path string, start time.Time) {
	d := time.Since(start)
	s.mu.Lock()
	s.spent[path] += d
	s.handled[path]++
	s.mu.Unlock()
}
