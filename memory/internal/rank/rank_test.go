package rank

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFuse(t *testing.T) {
	a := []Ranked{{ID: 1, Score: 9}, {ID: 2, Score: 8}, {ID: 3, Score: 7}}
	b := []Ranked{{ID: 3, Score: 0.9}, {ID: 4, Score: 0.8}}
	got := Fuse(a, b)
	ids := make([]int64, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	// 3 is in both lists (1/63 + 1/61), ahead of 1 (1/61); 2 and 4 tie at
	// 1/62 and are ordered by id.
	if !slices.Equal(ids, []int64{3, 1, 2, 4}) || got[0].Score != 1.0/63+1.0/61 {
		t.Fatalf("fused %v", got)
	}
}

func TestTopKIsTheBestK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []Ranked
	top := NewTopK(10)
	for i := range 1000 {
		r := Ranked{ID: int64(i), Score: rng.Float64()}
		all = append(all, r)
		top.Offer(r)
	}
	Sort(all)
	if got := top.Best(); !slices.Equal(got, all[:10]) {
		t.Fatalf("best %v, want %v", got, all[:10])
	}
	if NewTopK(0).Offer(Ranked{ID: 1}); len(NewTopK(0).Best()) != 0 {
		t.Fatal("a TopK of 0 kept something")
	}
}

func TestDedupeAndRange(t *testing.T) {
	if got := Dedupe([]string{"a", "b", "a", "c", "b"}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("dedupe %v", got)
	}
	lo, hi := PrefixRange("memory://project/p/")
	for s, in := range map[string]bool{"memory://project/p/x": true, "memory://project/p/": true, "memory://project/q/x": false, "memory://project/p": false} {
		if (s >= lo && s < hi) != in {
			t.Errorf("%q in range: %v", s, !in)
		}
	}
}

// TestFuseVia: a fused row's Via joins its lists' in the lists' order.
func TestFuseVia(t *testing.T) {
	got := Fuse([]Ranked{{ID: 1, Via: "bm25"}, {ID: 2, Via: "bm25"}}, []Ranked{{ID: 2, Via: "graph"}, {ID: 3, Via: "graph"}})
	want := map[int64]string{1: "bm25", 2: "bm25+graph", 3: "graph"}
	for _, r := range got {
		if r.Via != want[r.ID] {
			t.Errorf("row %d: via %q, want %q", r.ID, r.Via, want[r.ID])
		}
	}
}
