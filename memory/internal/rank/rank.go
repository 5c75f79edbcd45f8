// Package rank holds what the memory backends rank with alike: scored
// rows, reciprocal-rank fusion, a bounded best-k heap, and the small
// conventions of scope lists, URI ranges and embedder names.
package rank

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/openrath/rath/model"
)

// Ranked is a backend's row and its score in one ranking (higher is better).
type Ranked struct {
	ID    int64
	Score float64
	Via   string // how the ranking found the row (memory.Hit.Via)
}

// RRFK is the constant of reciprocal rank fusion: a hit at rank r (from 1)
// in a list adds 1/(RRFK + r) to its score.
const RRFK = 60

// Sort orders best first, ties by id.
func Sort(rs []Ranked) {
	slices.SortFunc(rs, func(a, b Ranked) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// Fuse merges rankings by reciprocal rank: best first, ties by id; a
// row's Via joins its lists' with "+", in the lists' order.
func Fuse(lists ...[]Ranked) []Ranked {
	score := map[int64]float64{}
	via := map[int64]string{}
	var order []int64
	for _, l := range lists {
		for i, r := range l {
			if _, ok := score[r.ID]; !ok {
				order = append(order, r.ID)
			}
			score[r.ID] += 1 / float64(RRFK+i+1)
			if v := via[r.ID]; r.Via != "" && v == "" {
				via[r.ID] = r.Via
			} else if r.Via != "" {
				via[r.ID] = v + "+" + r.Via
			}
		}
	}
	out := make([]Ranked, len(order))
	for i, id := range order {
		out[i] = Ranked{ID: id, Score: score[id], Via: via[id]}
	}
	Sort(out)
	return out
}

// TopK keeps the k best of what it is offered.
type TopK struct {
	k int
	h minHeap
}

// NewTopK keeps the k best.
func NewTopK(k int) *TopK { return &TopK{k: k} }

// Offer considers r.
func (t *TopK) Offer(r Ranked) {
	switch {
	case t.h.Len() < t.k:
		heap.Push(&t.h, r)
	case t.k > 0 && r.Score > t.h[0].Score:
		t.h[0] = r
		heap.Fix(&t.h, 0)
	}
}

// Best returns the kept rows, best first; the TopK is empty afterwards.
func (t *TopK) Best() []Ranked {
	out := make([]Ranked, t.h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&t.h).(Ranked)
	}
	return out
}

type minHeap []Ranked

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].Score < h[j].Score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(Ranked)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Dedupe returns keys without repeats, in their first order.
func Dedupe(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// PrefixRange is the half-open range of strings, compared bytewise, that
// start with prefix ("" has no upper bound short of "\U0010FFFF…").
func PrefixRange(prefix string) (lo, hi string) { return prefix, prefix + "\U0010FFFF" }

// EmbedderKey names the embedding model whose vectors a row holds.
func EmbedderKey(e model.Embedder) string { return e.Provider() + ":" + e.Name() }
