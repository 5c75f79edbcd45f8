package local

import (
	"cmp"
	"slices"
)

// cand is a node and its similarity to the vector searched for.
type cand struct {
	id  int32
	sim float32
}

// searcher is one search's scratch space, reused through the graph's pool.
type searcher struct {
	marks  []uint32 // marks[n] == stamp: node n was visited by this search
	stamp  uint32
	todo   minHeap32 // candidates to expand, sims negated: best on top
	found  minHeap32 // the ef best found, worst on top
	out    []cand
	nb     []int32 // link's selected neighbours
	sel    []int32 // addLink's selected neighbours
	pruned []cand  // addLink's candidates
}

func (g *graph) searcher() *searcher { return g.pool.Get().(*searcher) }

// begin starts a search over n nodes: nothing is visited.
func (s *searcher) begin(n int) {
	if len(s.marks) < n {
		s.marks = make([]uint32, n+n/4)
		s.stamp = 0
	}
	if s.stamp++; s.stamp == 0 {
		clear(s.marks)
		s.stamp = 1
	}
	s.todo, s.found = s.todo[:0], s.found[:0]
}

// visit marks node n visited, reporting whether it was not yet.
func (s *searcher) visit(n int32) bool {
	if s.marks[n] == s.stamp {
		return false
	}
	s.marks[n] = s.stamp
	return true
}

// greedy walks layer l from ep to the node most similar to q it can reach
// by always moving to a better neighbour.
func (g *graph) greedy(q []float32, ep int32, l int) int32 {
	best := dot(q, g.vec(ep))
	for moved := true; moved; {
		moved = false
		for _, nb := range g.linksAt(ep, l) {
			if sim := dot(q, g.vec(nb)); sim > best {
				best, ep, moved = sim, nb, true
			}
		}
	}
	return ep
}

// searchLayer explores layer l best-first from ep and returns the ef live
// nodes most similar to q that it found (never skip), best first, in
// s.out. Dead nodes are explored through but not returned.
func (g *graph) searchLayer(s *searcher, q []float32, ep int32, ef, l int, skip int32) []cand {
	s.begin(len(g.keys))
	s.visit(ep)
	sim := dot(q, g.vec(ep))
	s.todo.push(cand{ep, -sim})
	if !g.dead[ep] && ep != skip {
		s.found.push(cand{ep, sim})
	}
	for len(s.todo) > 0 {
		c := s.todo.pop()
		if len(s.found) >= ef && -c.sim < s.found[0].sim {
			break
		}
		for _, nb := range g.linksAt(c.id, l) {
			if !s.visit(nb) {
				continue
			}
			sim := dot(q, g.vec(nb))
			if len(s.found) >= ef && sim <= s.found[0].sim {
				continue
			}
			s.todo.push(cand{nb, -sim})
			if !g.dead[nb] && nb != skip {
				s.found.push(cand{nb, sim})
				if len(s.found) > ef {
					s.found.pop()
				}
			}
		}
	}
	s.out = append(s.out[:0], s.found...)
	sortCands(s.out)
	return s.out
}

// search returns up to k live nodes most similar to unit vector q, best
// first: exactly when the graph is unlinked, else by an HNSW search
// keeping max(ef, k) candidates. It may run concurrently with other
// searches.
func (g *graph) search(q []float32, k, ef int) []cand {
	if g.live() == 0 || k <= 0 || len(q) != g.dims {
		return nil
	}
	s := g.searcher()
	defer g.pool.Put(s)
	if !g.linked || g.entry < 0 {
		return slices.Clone(g.scan(s, q, k))
	}
	ep := g.entry
	for l := g.top; l > 0; l-- {
		ep = g.greedy(q, ep, l)
	}
	w := g.searchLayer(s, q, ep, max(ef, k), 0, -1)
	return slices.Clone(w[:min(k, len(w))])
}

// exact is the k live nodes most similar to q, best first, by a scan,
// whether or not the graph is linked. It may run concurrently with
// searches.
func (g *graph) exact(q []float32, k int) []cand {
	if g.live() == 0 || k <= 0 || len(q) != g.dims {
		return nil
	}
	s := g.searcher()
	defer g.pool.Put(s)
	return slices.Clone(g.scan(s, q, k))
}

// scan is the exact search: every live node's similarity, the k best kept.
func (g *graph) scan(s *searcher, q []float32, k int) []cand {
	s.found = s.found[:0]
	for n := range g.keys {
		if g.dead[n] {
			continue
		}
		sim := dot(q, g.vec(int32(n)))
		if len(s.found) < k {
			s.found.push(cand{int32(n), sim})
		} else if sim > s.found[0].sim {
			s.found[0] = cand{int32(n), sim}
			s.found.down(0)
		}
	}
	s.out = append(s.out[:0], s.found...)
	sortCands(s.out)
	return s.out
}

// sortCands orders best first, ties by node.
func sortCands(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// minHeap32 is a binary heap of candidates, least similar on top.
type minHeap32 []cand

func (h *minHeap32) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].sim <= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap32) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

func (h minHeap32) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && h[r].sim < h[l].sim {
			j = r
		}
		if h[i].sim <= h[j].sim {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
