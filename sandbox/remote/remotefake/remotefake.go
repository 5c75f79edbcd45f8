// Package remotefake is what the in-process fakes of remote sandbox
// providers (sandbox/e2b/e2bfake, sandbox/opensandbox/osfake) share: a
// ledger of the requests they saw and the time they spent on them, and
// the faults a test injects.
package remotefake

import (
	"strings"
	"sync"
	"time"
)

// Ledger counts a fake's requests by URL path, on arrival and once
// handled, with the time spent on them. The zero Ledger is ready.
type Ledger struct {
	mu      sync.Mutex
	counts  map[string]int           // on arrival
	spent   map[string]time.Duration // from arrival until the handler returned
	handled map[string]int           // when the handler returned
}

// Arrived counts a request to path.
func (l *Ledger) Arrived(path string) {
	l.mu.Lock()
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	l.counts[path]++
	l.mu.Unlock()
}

// Done adds a request to path that arrived at start and whose handler has
// returned.
func (l *Ledger) Done(path string, start time.Time) {
	d := time.Since(start)
	l.mu.Lock()
	if l.spent == nil {
		l.spent, l.handled = map[string]time.Duration{}, map[string]int{}
	}
	l.spent[path] += d
	l.handled[path]++
	l.mu.Unlock()
}

// Requests is how many requests the fake has seen whose URL path starts
// with prefix.
func (l *Ledger) Requests(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for p, c := range l.counts {
		if strings.HasPrefix(p, prefix) {
			n += c
		}
	}
	return n
}

// Handling is the time the fake spent on the requests whose URL path
// starts with prefix, each from its arrival until its handler returned (a
// stream's handler after its last message, or when it broke), and how
// many requests that covers. A request is counted by Requests when it
// arrives and here when it is done, so the two counts agree once no such
// request is in flight. Benchmarks subtract it from a call's wall time to
// get the client's own cost.
func (l *Ledger) Handling(prefix string) (spent time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, d := range l.spent {
		if strings.HasPrefix(p, prefix) {
			spent += d
			n += l.handled[p]
		}
	}
	return spent, n
}

// Fault is a failure a fake serves instead of answering.
type Fault struct {
	// Method (empty: any) and Path select requests: Path is a prefix of
	// the route the fake matches (its documentation says which).
	Method, Path string
	// Status is the refusal's HTTP status (with the provider's error
	// body), and RetryAfter its Retry-After header.
	Status     int
	RetryAfter string
	// CutAfter, for output streams: answer normally, then break the
	// connection once this many bytes were sent.
	CutAfter int
	// Times is how many requests the fault hits (0: one).
	Times int
}

// Faults are the faults injected into a fake. The zero Faults is ready.
type Faults struct {
	mu   sync.Mutex
	list []*Fault
}

// Inject adds a fault.
func (fs *Faults) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	fs.mu.Lock()
	fs.list = append(fs.list, &f)
	fs.mu.Unlock()
}

// Refusal spends and returns the first refusal that hits a request, or
// nil.
func (fs *Faults) Refusal(method, route string) *Fault { return fs.take(method, route, false) }

// Cut spends the first cut that hits a stream and returns the byte count
// after which it breaks, or 0.
func (fs *Faults) Cut(method, route string) int {
	if f := fs.take(method, route, true); f != nil {
		return f.CutAfter
	}
	return 0
}

func (fs *Faults) take(method, route string, cut bool) *Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.list {
		if (f.CutAfter > 0) != cut || (f.Method != "" && f.Method != method) || !strings.HasPrefix(route, f.Path) {
			continue
		}
		if f.Times--; f.Times <= 0 {
			fs.list = append(fs.list[:i], fs.list[i+1:]...)
		}
		return f
	}
	return nil
}
