package session

import (
	"fmt"
	"iter"
)

// Session is an immutable chain of chunks with an identity and a lineage.
// Every method that seems to change a session returns a new one; the old one
// stays exactly as it was and may be used concurrently from any goroutine.
//
// A Session's ID names the logical session: Append keeps it (the session
// grows a new head), while Fork, ForkAt, Detach, Merge and Derive make new
// sessions with new ids and record where they came from in their Lineage.
type Session struct {
	id  ID
	t   tree
	lin *Lineage // shared, never modified
}

// New returns an empty session with a fresh id and leaf lineage.
func New() *Session { return newLeaf(LineageLeaf, "new") }

// FromUser returns a new session holding one user chunk.
func FromUser(text string) *Session {
	return newLeaf(LineageLeafUser, "from_user").Append(User(text))
}

// FromSystem returns a new session holding one system chunk: the prompt
// session of an agent.
func FromSystem(text string) *Session {
	return newLeaf(LineageLeafSystem, "from_system").Append(System(text))
}

func newLeaf(kind LineageKind, op string) *Session {
	return &Session{id: NewID(), lin: &Lineage{Parents: []ID{}, Op: op, Kind: kind}}
}

// ID returns the session's id.
func (s *Session) ID() ID { return s.id }

// Len returns the number of chunks.
func (s *Session) Len() int { return s.t.n }

// Chunk returns chunk i. It panics if i is out of range, like a slice index.
func (s *Session) Chunk(i int) Chunk {
	if i < 0 || i >= s.t.n {
		panic(fmt.Sprintf("session: chunk index %d out of range [0,%d)", i, s.t.n))
	}
	return s.t.get(i).Chunk
}

// Last returns the last chunk and true, or false for an empty session.
func (s *Session) Last() (Chunk, bool) {
	if s.t.n == 0 {
		return Chunk{}, false
	}
	return s.t.get(s.t.n - 1).Chunk, true
}

// All iterates over the chunks in order with their indexes.
func (s *Session) All() iter.Seq2[int, Chunk] {
	return s.From(0)
}

// From iterates over the chunks from index lo on.
func (s *Session) From(lo int) iter.Seq2[int, Chunk] {
	return func(yield func(int, Chunk) bool) {
		s.t.each(max(lo, 0), func(i int, e *entry) bool { return yield(i, e.Chunk) })
	}
}

// Chunks returns a copy of all chunks as a slice.
func (s *Session) Chunks() []Chunk {
	out := make([]Chunk, 0, s.t.n)
	s.t.each(0, func(_ int, e *entry) bool { out = append(out, e.Chunk); return true })
	return out
}

// Head returns the id of the last chunk, or "" for an empty session.
func (s *Session) Head() ChunkID {
	if s.t.n == 0 {
		return ""
	}
	return s.t.get(s.t.n - 1).ID
}

// Lineage returns a copy of the session's lineage.
func (s *Session) Lineage() Lineage { return s.lin.clone() }

// Usage returns the tokens spent by every model call in the chain.
func (s *Session) Usage() Usage {
	if s.t.n == 0 {
		return Usage{}
	}
	return *s.t.get(s.t.n - 1).usage
}

// Placement returns the latest placement in the chain, or the zero
// Placement if the session was never placed.
func (s *Session) Placement() Placement {
	if s.t.n == 0 {
		return Placement{}
	}
	if p := s.t.get(s.t.n - 1).placement; p != nil {
		return *p
	}
	return Placement{}
}

// Append returns the session with cs added after its head: same id, new
// head. Each chunk gets Parent and ID, a time if it has none, and its kind's
// default tier if it has none. Append panics on a malformed chunk (one that
// fails Validate), as a slice does on a bad index: chunks built with this
// package's constructors are always well formed. Use TryAppend for chunks
// built from untrusted input.
func (s *Session) Append(cs ...Chunk) *Session {
	out, err := s.TryAppend(cs...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryAppend is Append that returns an error, and s unchanged, instead of
// panicking on a malformed chunk.
func (s *Session) TryAppend(cs ...Chunk) (*Session, error) {
	t := s.t
	for _, c := range cs {
		e, err := s.seal(t, c)
		if err != nil {
			return nil, fmt.Errorf("append chunk %d: %w", t.n, err)
		}
		t = t.push(e)
	}
	return &Session{id: s.id, t: t, lin: s.lin}, nil
}

// seal builds the entry for c appended to the view t.
func (s *Session) seal(t tree, c Chunk) (*entry, error) {
	var parent ChunkID
	var prev *entry
	if t.n > 0 {
		prev = t.get(t.n - 1)
		parent = prev.ID
	}
	sealed, err := Seal(parent, c)
	if err != nil {
		return nil, err
	}
	return newEntry(prev, sealed), nil
}

var zeroUsage = &Usage{}

// newEntry derives the chain facts of c from those of the entry before it.
func newEntry(prev *entry, c Chunk) *entry {
	e := &entry{Chunk: c, usage: zeroUsage}
	if prev != nil {
		e.usage, e.placement = prev.usage, prev.placement
	}
	if c.ModelCall != nil && !c.ModelCall.Usage.IsZero() {
		u := e.usage.Add(c.ModelCall.Usage)
		e.usage = &u
	}
	if c.Placement != nil {
		e.placement = c.Placement
	}
	return e
}

// Fork returns a new session with the same chunks, a new id and lineage
// naming s as its parent. It costs O(1) whatever the session's length.
func (s *Session) Fork() *Session {
	return &Session{id: NewID(), t: s.t, lin: &Lineage{Parents: []ID{s.id}, Op: "fork", Kind: LineageFork}}
}

// ForkAt returns a fork that keeps only the first n chunks (0 <= n <= Len).
func (s *Session) ForkAt(n int) (*Session, error) {
	if n < 0 || n > s.t.n {
		return nil, fmt.Errorf("%w: fork at %d: session %s has %d chunks", ErrRange, n, s.id, s.t.n)
	}
	f := s.Fork()
	f.t = s.t.truncate(n)
	f.lin.Extras = map[string]string{"at": fmt.Sprint(n)}
	return f, nil
}

// Rewind returns the session as it was with its first n chunks: the same
// id and lineage, an earlier head (0 <= n <= Len). Replay uses it to
// re-append chunks others appended; a store refuses to commit a head that
// does not extend the stored one.
func (s *Session) Rewind(n int) (*Session, error) {
	if n < 0 || n > s.t.n {
		return nil, fmt.Errorf("%w: rewind to %d: session %s has %d chunks", ErrRange, n, s.id, s.t.n)
	}
	return &Session{id: s.id, t: s.t.truncate(n), lin: s.lin}, nil
}

// Detach returns a new session with the same chunks, a new id and no
// parents: the start of an independent history.
func (s *Session) Detach() *Session {
	return &Session{id: NewID(), t: s.t, lin: &Lineage{Parents: []ID{}, Op: "detach", Kind: LineageDetach}}
}

// Derive returns a new session with the same chunks whose lineage says it
// was produced by op from s and any other parents. Modules call it on their
// input before appending their output (an agent's op is "agent:<name>").
func (s *Session) Derive(op string, extras map[string]string, others ...*Session) *Session {
	parents := make([]ID, 0, 1+len(others))
	parents = append(parents, s.id)
	for _, o := range others {
		parents = append(parents, o.id)
	}
	l := Lineage{Parents: parents, Op: op, Kind: LineageDerive, Extras: extras}.clone()
	return &Session{id: NewID(), t: s.t, lin: &l}
}

// To returns the session placed on a sandbox backend with the given spec: it
// appends a placement chunk (same id, new head). The sandbox itself is
// opened lazily by the runtime on first use.
func (s *Session) To(backend string, spec Spec) *Session {
	return s.Append(Of(&Placement{Backend: backend, Spec: spec}))
}

// String describes the session in one line.
func (s *Session) String() string {
	return fmt.Sprintf("Session(%s, %d chunks, head %s, %s)", s.id, s.t.n, s.Head().Short(), s.lin.Op)
}
