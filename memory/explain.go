package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Loader loads a session by id; store.Store satisfies it.
type Loader interface {
	Load(ctx context.Context, id session.ID) (*session.Session, error)
}

// Explanation answers, from session graphs alone, why a memory was present
// in a run and what evidence justified it.
type Explanation struct {
	URI string
	// Recalls are the run's recalls that returned the entry, in order.
	Recalls []Recalled
	// Writes are the writes behind what was recalled or written in the
	// run: each found in its writer session, with its evidence resolved.
	Writes []Justification
}

// Recalled is one recall of the entry in the run.
type Recalled struct {
	Chunk session.ChunkID // the recall's memory chunk
	Index int             // its position in the run
	Query string
	Score float64
	Hash  string // the content hash as it was read
}

// Justification is one write of the entry and the evidence it rests on.
type Justification struct {
	Writer session.ID      // the session that wrote it
	Chunk  session.ChunkID // its remember or commit chunk there ("" if not found)
	Op     session.MemoryOp
	Hash   string
	Kind   string // the kind of evidence
	// Evidence holds the justifying chunks found in the writer session;
	// Missing the ids that were not (a writer not loaded, or a write done
	// outside any session).
	Evidence []session.Chunk
	Missing  []session.ChunkID
	// Forgotten is set when the writer later rolled its writes back.
	Forgotten bool
	// Resumed is the session of the resumed step that continued the
	// writer, an interrupted attempt, if there is one: it holds the
	// writer's record and what the step did after it, and is read in its
	// place (session.Lineage.Resumes).
	Resumed session.ID
}

// Explain walks run for uri: the recalls that returned it and, through the
// writer recorded in each hit, the chunk that wrote that content and the
// evidence it cited; writes of uri made in run itself are included. l loads
// writer sessions (nil: only run is searched). It fails with ErrNotFound if
// run neither recalled nor wrote uri.
func Explain(ctx context.Context, l Loader, run *session.Session, uri string) (*Explanation, error) {
	x := &Explanation{URI: uri}
	type write struct {
		writer session.ID
		hash   string
		kind   string
		cited  []session.ChunkID
	}
	var writes []write
	seen := map[string]bool{}
	add := func(w write) {
		key := string(w.writer) + " " + w.hash
		if !seen[key] {
			seen[key] = true
			writes = append(writes, w)
		}
	}
	for i, c := range run.All() {
		m := c.Memory
		if m == nil {
			continue
		}
		switch m.Op {
		case session.MemoryRecall:
			for _, h := range m.Hits {
				if h.URI == uri {
					x.Recalls = append(x.Recalls, Recalled{Chunk: c.ID, Index: i, Query: m.Query, Score: h.Score, Hash: h.Hash})
					add(write{writer: h.Writer, hash: h.Hash, kind: h.EvidenceKind, cited: h.Evidence})
				}
			}
		case session.MemoryRemember, session.MemoryCommit:
			if m.URI == uri {
				add(write{writer: run.ID(), hash: m.ContentHash, kind: m.EvidenceKind, cited: m.Evidence})
			}
		}
	}
	if len(x.Recalls) == 0 && len(writes) == 0 {
		return nil, fmt.Errorf("%w: session %s neither recalled nor wrote %s", ErrNotFound, run.ID(), uri)
	}
	for _, w := range writes {
		j := Justification{Writer: w.writer, Hash: w.hash, Kind: w.kind}
		var ws *session.Session
		switch {
		case w.writer == "":
		case w.writer == run.ID():
			ws = run
		case l != nil:
			s, err := l.Load(ctx, w.writer)
			if err != nil {
				return nil, fmt.Errorf("memory: explain %s: writer %s: %w", uri, w.writer, err)
			}
			ws = s
			if r, err := resumedOf(ctx, l, s); err != nil {
				return nil, fmt.Errorf("memory: explain %s: writer %s: %w", uri, w.writer, err)
			} else if r != nil {
				ws, j.Resumed = r, r.ID()
			}
		}
		cited := w.cited
		if ws != nil {
			byID := map[session.ChunkID]session.Chunk{}
			for _, c := range ws.All() {
				byID[c.ID] = c
				m := c.Memory
				if m == nil {
					continue
				}
				if (m.Op == session.MemoryRemember || m.Op == session.MemoryCommit) && m.URI == uri && m.ContentHash == w.hash {
					j.Chunk, j.Op, j.Kind, cited = c.ID, m.Op, m.EvidenceKind, m.Evidence
				}
				if m.Op == session.MemoryForget && j.Chunk != "" && slices.Contains(m.Forgotten, uri) {
					j.Forgotten = true
				}
			}
			for _, id := range cited {
				if c, ok := byID[id]; ok {
					j.Evidence = append(j.Evidence, c)
				} else {
					j.Missing = append(j.Missing, id)
				}
			}
		} else {
			j.Missing = append(j.Missing, cited...)
		}
		x.Writes = append(x.Writes, j)
	}
	return x, nil
}

// lister lists stored sessions; store.Store satisfies it.
type lister interface {
	List(ctx context.Context, f store.Filter) ([]store.Info, error)
}

// resumedOf is the session of the step that resumed w, an interrupted
// attempt, nearest first (the one whose Lineage.Resumes names w and is
// longest), nil if none or if l cannot list sessions.
func resumedOf(ctx context.Context, l Loader, w *session.Session) (*session.Session, error) {
	li, ok := l.(lister)
	if w == nil || !ok {
		return nil, nil // a writer not loaded; a loader that cannot list
	}
	lin := w.Lineage()
	if lin.Kind != session.LineageDerive || len(lin.Parents) == 0 {
		return nil, nil
	}
	infos, err := li.List(ctx, store.Filter{Parent: lin.Parents[0], Op: lin.Op})
	if err != nil {
		return nil, err
	}
	var best *store.Info
	for i, info := range infos {
		rs := info.Lineage.Resumes()
		if slices.Contains(rs, w.ID()) && (best == nil || len(rs) > len(best.Lineage.Resumes())) {
			best = &infos[i]
		}
	}
	if best == nil {
		return nil, nil
	}
	return l.Load(ctx, best.ID)
}
