package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// chunkCache keeps, for the sessions event streams follow, a window of
// their latest chunks, so that a commit followed by a thousand streams is
// read from the store once, not a thousand times: the first stream to ask
// reads it while the others wait on the session's lock, then they all
// find it here.
type chunkCache struct {
	st       store.Store
	mu       sync.Mutex
	sessions map[session.ID]*recentChunks
	tick     uint64 // for least-recently-used eviction
}

// recentChunks is one session's window: chunks [from, from+len(chunks)),
// and the JSON of those encoded so far (nil until asked for).
type recentChunks struct {
	mu     sync.Mutex
	from   int
	chunks []session.Chunk
	json   [][]byte
	used   uint64
}

// encodedChunk is a chunk's kind and JSON, as an event sends it, and
// whether it is a turn that calls tools.
type encodedChunk struct {
	calls bool
	kind  session.Kind
	json  []byte
}

// The cache's bounds: the chunks a window keeps, and the sessions it
// keeps windows for.
const (
	cacheWindow   = 1024
	cacheSessions = 256
)

func newChunkCache(st store.Store) *chunkCache {
	return &chunkCache{st: st, sessions: map[session.ID]*recentChunks{}}
}

// window returns id's window, making it (and evicting the least recently
// used one past cacheSessions) if needed.
func (c *chunkCache) window(id session.ID) *recentChunks {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	w := c.sessions[id]
	if w == nil {
		if len(c.sessions) >= cacheSessions {
			var oldest session.ID
			var at uint64
			for k, v := range c.sessions {
				if oldest == "" || v.used < at {
					oldest, at = k, v.used
				}
			}
			delete(c.sessions, oldest)
		}
		w = &recentChunks{}
		c.sessions[id] = w
	}
	w.used = c.tick
	return w
}

// Encoded returns chunks [from, to) of session id encoded as JSON. A range
// that ends past the window's end extends it (reading only what it lacks),
// and each chunk of the window is encoded once, for every stream; a range
// that starts before the window is read and encoded for this caller alone.
func (c *chunkCache) Encoded(ctx context.Context, id session.ID, from, to int) ([]encodedChunk, error) {
	w := c.window(id)
	w.mu.Lock()
	defer w.mu.Unlock()
	end := w.from + len(w.chunks)
	if from < w.from || (from > end && len(w.chunks) > 0) {
		return c.uncached(ctx, id, from, to)
	}
	if len(w.chunks) == 0 {
		w.from, end = from, from
	}
	if to > end {
		more, err := c.st.Range(ctx, id, end, to)
		if err != nil {
			return nil, err
		}
		w.chunks = append(w.chunks, more...)
		w.json = append(w.json, make([][]byte, len(more))...)
		if over := len(w.chunks) - cacheWindow; over > 0 {
			// The latest chunks in arrays of their own: the old ones may
			// be held by what was handed out.
			w.chunks = append([]session.Chunk(nil), w.chunks[over:]...)
			w.json = append([][]byte(nil), w.json[over:]...)
			w.from += over
		}
		if from < w.from {
			return c.uncached(ctx, id, from, to) // the window moved past from
		}
	}
	out := make([]encodedChunk, 0, to-from)
	for i := from - w.from; i < to-w.from; i++ {
		if w.json[i] == nil {
			b, err := json.Marshal(w.chunks[i])
			if err != nil {
				return nil, fmt.Errorf("encode chunk %d of %s: %w", w.from+i, id, err)
			}
			w.json[i] = b
		}
		out = append(out, encodedOf(w.chunks[i], w.json[i]))
	}
	return out, nil
}

// uncached reads and encodes chunks [from, to) of id for one caller.
func (c *chunkCache) uncached(ctx context.Context, id session.ID, from, to int) ([]encodedChunk, error) {
	cs, err := c.st.Range(ctx, id, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]encodedChunk, len(cs))
	for i, ch := range cs {
		b, err := json.Marshal(ch)
		if err != nil {
			return nil, fmt.Errorf("encode chunk %d of %s: %w", from+i, id, err)
		}
		out[i] = encodedOf(ch, b)
	}
	return out, nil
}

func encodedOf(ch session.Chunk, b []byte) encodedChunk {
	return encodedChunk{kind: ch.Kind, json: b, calls: ch.Assistant != nil && len(ch.Assistant.ToolCalls) > 0}
}
