package session

import "fmt"

// AppendCopy appends chunk i of src to s: the same chunk — kind, body,
// node, time and tier — re-chained after s's head, with a new parent and id
// and no Origin. It is how a replay repeats a recorded chunk verbatim. The
// chunk is not validated again: it was when it entered src.
func (s *Session) AppendCopy(src *Session, i int) (*Session, error) {
	if i < 0 || i >= src.t.n {
		return nil, fmt.Errorf("%w: copy chunk %d: session %s has %d chunks", ErrRange, i, src.id, src.t.n)
	}
	c := src.t.get(i).Chunk
	c.Origin, c.Parent = "", ""
	var prev *entry
	if s.t.n > 0 {
		prev = s.t.get(s.t.n - 1)
		c.Parent = prev.ID
	}
	id, err := c.computeID()
	if err != nil {
		return nil, fmt.Errorf("append a copy of chunk %d of %s: %w", i, src.id, err)
	}
	c.ID = id
	return &Session{id: s.id, t: s.t.push(newEntry(prev, c)), lin: s.lin}, nil
}
