package session

import "fmt"

// Assemble rebuilds a session from chunks that were sealed before — read
// back from a store or a file. It checks that each chunk is well formed and
// that each one's Parent is the id of the chunk before it, but trusts the ids
// themselves (recomputing a million hashes is Verify's job, not a load's).
func Assemble(id ID, lin Lineage, chunks []Chunk) (*Session, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	s := &Session{id: id, lin: ptr(lin.clone())}
	for i, c := range chunks {
		if err := s.appendSealed(c); err != nil {
			return nil, fmt.Errorf("assemble %s: chunk %d: %w", id, i, err)
		}
	}
	return s, nil
}

// AssembleValidated is Assemble for chunks that have each passed Validate
// already (a store validates them while decoding, on all cores): it checks
// only the session id, the chunk ids' form and the parent links.
func AssembleValidated(id ID, lin Lineage, chunks []Chunk) (*Session, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	s := &Session{id: id, lin: ptr(lin.clone())}
	var prev *entry
	for i, c := range chunks {
		want := ChunkID("")
		if prev != nil {
			want = prev.ID
		}
		if c.Parent != want {
			return nil, fmt.Errorf("assemble %s: chunk %d: %w: parent is %q, want %q", id, i, ErrTampered, c.Parent, want)
		}
		if err := c.ID.Validate(); err != nil {
			return nil, fmt.Errorf("assemble %s: chunk %d: %w", id, i, err)
		}
		prev = newEntry(prev, c)
		s.t = s.t.push(prev)
	}
	return s, nil
}

// appendSealed adds an already sealed chunk in place; only for sessions under
// construction that nobody else can see yet.
func (s *Session) appendSealed(c Chunk) error {
	var prev *entry
	if s.t.n > 0 {
		prev = s.t.get(s.t.n - 1)
	}
	want := ChunkID("")
	if prev != nil {
		want = prev.ID
	}
	if c.Parent != want {
		return fmt.Errorf("%w: parent is %q, want %q", ErrTampered, c.Parent, want)
	}
	if err := c.ID.Validate(); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	s.t = s.t.push(newEntry(prev, c))
	return nil
}

func ptr[T any](v T) *T { return &v }
