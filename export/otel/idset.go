package otel

import "github.com/openrath/rath/session"

// idSet is a set of chunk ids that forgets its oldest ids beyond a capacity.
type idSet struct {
	m    map[session.ChunkID]struct{}
	ring []session.ChunkID // ids in insertion order, oldest at next once full
	next int
	cap  int
}

func newIDSet(capacity int) *idSet {
	return &idSet{m: make(map[session.ChunkID]struct{}, capacity), cap: capacity}
}

func (s *idSet) has(id session.ChunkID) bool {
	_, ok := s.m[id]
	return ok
}

// add adds id, forgetting the oldest id if the set is full.
func (s *idSet) add(id session.ChunkID) {
	if id == "" || s.has(id) {
		return
	}
	if len(s.ring) < s.cap {
		s.ring = append(s.ring, id)
	} else {
		delete(s.m, s.ring[s.next])
		s.ring[s.next] = id
		s.next = (s.next + 1) % s.cap
	}
	s.m[id] = struct{}{}
}
