package egress

import (
	"sync"

	"github.com/openrath/rath/sandbox"
)

// recorder keeps the decisions a proxy made: the first
// sandbox.MaxConnections, and a count of the rest.
type recorder struct {
	mu      sync.Mutex
	conns   []sandbox.Connection
	dropped int64
}

func (r *recorder) add(c sandbox.Connection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.conns) >= sandbox.MaxConnections {
		r.dropped++
		return
	}
	r.conns = append(r.conns, c)
}

func (r *recorder) list() ([]sandbox.Connection, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sandbox.Connection(nil), r.conns...), r.dropped
}
