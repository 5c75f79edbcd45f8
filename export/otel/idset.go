package otel

// idSet is a set of ids (chunk or session ids) that forgets its oldest ids
// beyond a capacity.
type idSet[K comparable] struct {
	m    map[K]struct{}
	ring []K // ids in insertion order, oldest at next once full
	next int
	cap  int
}

func newIDSet[K comparable](capacity int) *idSet[K] {
	return &idSet[K]{m: make(map[K]struct{}, min(capacity, 1024)), cap: capacity}
}

func (s *idSet[K]) has(id K) bool {
	_, ok := s.m[id]
	return ok
}

// add adds id, forgetting the oldest id if the set is full. The zero id is
// never added.
func (s *idSet[K]) add(id K) {
	var zero K
	if id == zero || s.has(id) {
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
