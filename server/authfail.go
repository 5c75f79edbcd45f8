package server

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/openrath/rath/audit"
)

// Failed authentications are audited per source, within bounds, so that a
// client without a credential cannot grow the store without end. A
// source is the client's IP address (an IPv6 one by its /64, which one
// client holds whole); the proxy's address, behind a proxy. In each window
// (authFailWindow, from the first failure), the first authFailPerSource
// failures of a source are written one by one, at most
// authFailPerWindow of all sources together; the others are counted, and
// when the window closes — at the first failure after it, when its timer
// fires, or when the server shuts down — one record per source sums them
// up (Record.Count, Record.Source). At most authFailSources sources are
// told apart in a window; failures from more are counted under
// authFailOther. A window thus writes at most authFailPerWindow +
// authFailSources + 1 records, however many failures it sees.
const (
	authFailWindow    = time.Minute
	authFailPerSource = 5
	authFailPerWindow = 100
	authFailSources   = 256
	authFailOther     = "other sources"
)

// authFailures tallies a window's failed authentications.
type authFailures struct {
	log *audit.Log
	now func() time.Time

	mu      sync.Mutex
	start   time.Time             // the window's start; zero: no window open
	by      map[string]*authTally // by source
	written int                   // records written one by one in the window
	timer   *time.Timer           // closes the window, once something is counted
}

// authTally is one source's failures in a window.
type authTally struct {
	written, counted int64
}

func newAuthFailures(l *audit.Log) *authFailures {
	return &authFailures{log: l, now: time.Now, by: map[string]*authTally{}}
}

// failed audits a failed authentication of r: rec, written now if the
// source and the window allow, else counted.
func (f *authFailures) failed(r *http.Request, rec audit.Record) {
	src := sourceOf(r.RemoteAddr)
	f.mu.Lock()
	closed := f.roll(f.now())
	t := f.by[src]
	if t == nil {
		if len(f.by) >= authFailSources {
			src = authFailOther
			t = f.by[src]
		}
		if t == nil {
			t = &authTally{}
			f.by[src] = t
		}
	}
	write := t.written < authFailPerSource && f.written < authFailPerWindow
	if write {
		t.written++
		f.written++
	} else {
		t.counted++
		if f.timer == nil {
			f.timer = time.AfterFunc(f.start.Add(authFailWindow).Sub(f.now()), f.tick)
		}
	}
	f.mu.Unlock()
	ctx := context.WithoutCancel(r.Context())
	f.write(ctx, closed)
	if write {
		rec.Source = src
		rec.RequestID = requestID(r)
		f.append(ctx, rec)
	}
}

// windowSums is what a closed window counted: its span and its tallies.
type windowSums struct {
	start, end time.Time
	by         map[string]*authTally
}

// roll closes the window if it is over at now (returning what it
// counted) and opens one at now if none is open. Callers hold f.mu.
func (f *authFailures) roll(now time.Time) *windowSums {
	var closed *windowSums
	if !f.start.IsZero() && !now.Before(f.start.Add(authFailWindow)) {
		closed = f.take(now)
	}
	if f.start.IsZero() {
		f.start = now
	}
	return closed
}

// take ends the window at end, returning what it counted. Callers hold
// f.mu.
func (f *authFailures) take(end time.Time) *windowSums {
	w := &windowSums{start: f.start, end: end, by: f.by}
	f.start, f.by, f.written = time.Time{}, map[string]*authTally{}, 0
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	return w
}

// tick closes the window if it is over (its timer).
func (f *authFailures) tick() {
	f.mu.Lock()
	var closed *windowSums
	if !f.start.IsZero() && !f.now().Before(f.start.Add(authFailWindow)) {
		closed = f.take(f.now())
	}
	f.mu.Unlock()
	f.write(context.Background(), closed)
}

// flush closes the window now, whether or not it is over (shutdown).
func (f *authFailures) flush(ctx context.Context) {
	f.mu.Lock()
	var closed *windowSums
	if !f.start.IsZero() {
		closed = f.take(f.now())
	}
	f.mu.Unlock()
	f.write(ctx, closed)
}

// write records a closed window's counts: one record per source with
// failures not written one by one.
func (f *authFailures) write(ctx context.Context, w *windowSums) {
	if w == nil {
		return
	}
	for src, t := range w.by {
		if t.counted == 0 {
			continue
		}
		f.append(ctx, audit.Record{Kind: audit.KindAuthentication, Outcome: audit.OutcomeDenied, Source: src, Count: t.counted,
			Reason: fmt.Sprintf("%d more failed authentications from %s between %s and %s, not recorded one by one (%d were)",
				t.counted, src, w.start.UTC().Format(time.RFC3339), w.end.UTC().Format(time.RFC3339), t.written)})
	}
}

func (f *authFailures) append(ctx context.Context, rec audit.Record) {
	for _, p := range []*string{&rec.Reason, &rec.Resource, &rec.Action} {
		*p = clip(*p, audit.MaxField)
	}
	if err := f.log.Append(ctx, rec); err != nil {
		log.Printf("server: audit: %v", err)
	}
}

// sourceOf is the source a request's remote address counts under: its IP,
// an IPv6 address's /64 (but ::1).
func sourceOf(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return "unknown"
	case ip.To4() != nil:
		return ip.To4().String()
	case ip.IsLoopback():
		return ip.String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// auditAuthFailed audits r's failed authentication, if the server keeps
// an audit log (see authFailures).
func (s *Server) auditAuthFailed(r *http.Request, err error) {
	if s.authFails == nil {
		return
	}
	s.authFails.failed(r, audit.Record{Kind: audit.KindAuthentication, Resource: r.Method + " " + r.URL.Path,
		Outcome: audit.OutcomeDenied, Reason: err.Error()})
}

// flushAuthFailed writes what the open window counted (at shutdown).
func (s *Server) flushAuthFailed(ctx context.Context) {
	if s.authFails != nil {
		s.authFails.flush(ctx)
	}
}
