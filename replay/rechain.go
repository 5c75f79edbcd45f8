package replay

import (
	"sync"
	"sync/atomic"

	"github.com/openrath/rath/session"
)

// rechains are the record's re-chained chunks (those a join moved from a
// branch), in record order, for Rechained: listed on its first call, so a
// replay without joins does not pay for them.
type rechains struct {
	record []*session.Session
	listed sync.Once
	list   []rechain
	// hint is where the next lookup most likely lands: a join re-chains
	// its branches' chunks in the order the record holds them, so after
	// the first lookup each one is the entry after the last.
	hint  atomic.Int64
	once  sync.Once
	index map[session.ChunkID]int32 // origin -> position in list, for the rest
}

type rechain struct{ origin, parent, id session.ChunkID }

// add notes c if a join re-chained it.
func (r *rechains) add(c session.Chunk) {
	if c.Origin != "" {
		r.list = append(r.list, rechain{c.Origin, c.Parent, c.ID})
	}
}

// listRecord lists the re-chained chunks of the record.
func (r *rechains) listRecord() {
	n := 0
	for _, s := range r.record {
		n += s.Len()
	}
	r.list = make([]rechain, 0, n) // a record with joins is mostly joined chunks
	for _, s := range r.record {
		for _, c := range s.All() {
			r.add(c)
		}
	}
}

// Rechained implements runctx.Player: the record's re-chained copy of the
// chunk whose id is origin. An origin re-chained more than once (a branch
// joined into two places) gives the copy that follows the last one looked
// up if it is one, else its first; a join that wants another parent than
// the copy's hashes the chunk.
func (t *tape) Rechained(origin session.ChunkID) (parent, id session.ChunkID, ok bool) {
	r := &t.rechains
	r.listed.Do(r.listRecord)
	i := int(r.hint.Load())
	if i >= len(r.list) || r.list[i].origin != origin {
		r.once.Do(r.indexList)
		j, found := r.index[origin]
		if !found {
			return "", "", false
		}
		i = int(j)
	}
	r.hint.Store(int64(i + 1))
	return r.list[i].parent, r.list[i].id, true
}

// indexList maps each origin to its first position, for lookups out of
// record order (built only when one happens).
func (r *rechains) indexList() {
	r.index = make(map[session.ChunkID]int32, len(r.list))
	for i, x := range r.list {
		if _, dup := r.index[x.origin]; !dup {
			r.index[x.origin] = int32(i)
		}
	}
}
