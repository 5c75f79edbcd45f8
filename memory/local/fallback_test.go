package local

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

// sever cuts every link to and from the nodes of g most similar to q
// (at least minSim) on every layer, so that no graph search reaches them,
// and returns their rows. It fails the test if the entry point is one.
func sever(t *testing.T, g *graph, q []float32, minSim float32) []int64 {
	t.Helper()
	cut := map[int32]bool{}
	var rows []int64
	for n := range g.keys {
		if !g.dead[n] && dot(q, g.vec(int32(n))) >= minSim {
			cut[int32(n)] = true
			rows = append(rows, g.keys[n])
		}
	}
	if cut[g.entry] {
		t.Fatal("the entry point is among the severed nodes")
	}
	for n := range g.keys {
		for l := 0; l <= int(g.levels[n]); l++ {
			if cut[int32(n)] {
				g.setLinks(int32(n), l, nil)
				continue
			}
			g.setLinks(int32(n), l, slices.DeleteFunc(slices.Clone(g.linksAt(int32(n), l)), func(o int32) bool { return cut[o] }))
		}
	}
	return rows
}

// TestFallback: a query whose neighbours the graph search cannot reach
// (their links cut) finds nothing above the similarity cut-off through the
// graph, at efSearch or wider; the recall is answered by the exact scan
// all the same, and its memory chunk says so of every hit.
func TestFallback(t *testing.T) {
	ctx := context.Background()
	c := newClustered(5, 128, 40, 0, 0, 0.3) // separated clusters: a query is near its own only
	b := openIndexed(t, filepath.Join(t.TempDir(), "m.db"), newSynth(c), 500)
	defer b.Close()
	loadVectors(t, b, c, "f", 0, 2000)
	ids := scopeIDsOf(t, b, "project/f")
	mustNearest(t, b, c.query(0), ids, 5) // builds the graph
	s := b.ann.scope(ids[0])
	if !s.g.linked {
		t.Fatal("the scope is scanned, not searched through its graph")
	}
	var qi uint64
	for qi = 1; qi < 100; qi++ { // a query whose cluster does not hold the entry point
		if dot(unit(c.query(qi)), s.g.vec(s.g.entry)) < b.minSim {
			break
		}
	}
	q := unit(c.query(qi))
	near := sever(t, s.g, q, b.minSim)
	if len(near) < 10 {
		t.Fatalf("only %d vectors near query %d", len(near), qi)
	}
	for _, ef := range []int{b.ann.cfg.efSearch, widen * b.ann.cfg.efSearch} {
		if n := clearing(s.g.search(q, 10, ef), b.minSim); n != 0 {
			t.Fatalf("the graph search with ef %d finds %d above the cut-off past the severed links", ef, n)
		}
	}

	m := memory.Over(b)
	hits, sess, err := m.Recall(ctx, session.New(), memory.Query{Text: fmt.Sprint("q", qi), Scopes: []string{"project/f"}, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 {
		t.Fatalf("%d hits, want 5", len(hits))
	}
	if b.ann.stats.exact.Load() != 1 {
		t.Fatalf("%d exact fallbacks, want 1", b.ann.stats.exact.Load())
	}
	last, _ := sess.Last()
	ev, ok := last.Body().(*session.MemoryEvent)
	if !ok || len(ev.Hits) != 5 {
		t.Fatalf("the recall's chunk: %#v", last.Body())
	}
	for i, h := range ev.Hits {
		r := rowidOf(t, b, h.URI)
		if !slices.Contains(near, r) {
			t.Errorf("hit %s is not one of the query's neighbours", h.URI)
		}
		if !strings.Contains(h.Via, memory.ViaExact) || h.Via != hits[i].Via {
			t.Errorf("hit %s: via %q (hit says %q), want %q", h.URI, h.Via, hits[i].Via, memory.ViaExact)
		}
	}
}
