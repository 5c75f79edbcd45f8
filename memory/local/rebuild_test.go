package local

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/memory"
)

// TestRebuildBeside: once a third of a linked scope's nodes are dead, the
// recall that notices starts a rebuild and answers from the old graph;
// while the rebuild waits to swap (held there by the test), recalls keep
// answering and writes keep arriving; the rebuilt graph, swapped in,
// holds what the scope holds then: rows added, replaced and removed
// during the rebuild included.
func TestRebuildBeside(t *testing.T) {
	ctx := context.Background()
	c := newClustered(21, 32, 8, 8, 1, 0.3)
	b := openIndexed(t, filepath.Join(t.TempDir(), "m.db"), newSynth(c), 64)
	defer b.Close()
	loadVectors(t, b, c, "r", 0, 600)
	ids := scopeIDsOf(t, b, "project/r")
	mustNearest(t, b, c.vector(0), ids, 5)
	s := b.ann.scope(ids[0])
	old := s.g
	if !old.linked {
		t.Fatal("the scope is scanned, not searched through its graph")
	}
	entered, release := make(chan struct{}), make(chan struct{})
	b.ann.beforeSwap = func() { close(entered); <-release }
	for _, p := range []string{"e1", "e2", "e3", "e4"} { // 444 of 600
		if _, err := b.Delete(ctx, memory.Selector{Prefix: "memory://project/r/" + p}); err != nil {
			t.Fatal(err)
		}
	}
	top := func(i int) (int64, float64) {
		t.Helper()
		rs := mustNearest(t, b, c.vector(uint64(i)), ids, 1)
		if len(rs) == 0 {
			return 0, 0
		}
		return rs[0].ID, rs[0].Score
	}
	e0 := rowidOf(t, b, "memory://project/r/e0")
	if id, _ := top(0); id != e0 { // notices the deletes, starts the rebuild
		t.Fatalf("vector 0's nearest: row %d, want %d", id, e0)
	}
	<-entered // the new graph is linked, not yet swapped in
	if s.g != old {
		t.Fatal("the graph was replaced before the rebuild swapped")
	}
	m := memory.Over(b)
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, "memory://project/r/e0"), Content: "v900"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Delete(ctx, memory.Selector{URI: "memory://project/r/e599"}); err != nil {
		t.Fatal(err)
	}
	loadVectors(t, b, c, "r", 600, 1)
	if id, sim := top(900); id != e0 || sim < 0.999 { // answered by the old graph, caught up
		t.Fatalf("vector 900's nearest during the rebuild: row %d (%.3f), want %d", id, sim, e0)
	}
	close(release)
	b.ann.rebuilds.Wait()
	if s.g == old || b.ann.stats.rebuilt.Load() != 1 {
		t.Fatalf("not swapped: %d rebuilt", b.ann.stats.rebuilt.Load())
	}
	if live, dead := s.g.live(), s.g.ndead; live != 156 || dead > 2 {
		t.Fatalf("the rebuilt graph holds %d live and %d dead nodes, want 156 and at most 2", live, dead)
	}
	e600 := rowidOf(t, b, "memory://project/r/e600")
	for i, want := range map[int]int64{900: e0, 600: e600} {
		if id, sim := top(i); id != want || sim < 0.999 {
			t.Errorf("vector %d's nearest: row %d (%.3f), want %d", i, id, sim, want)
		}
	}
	for _, i := range []int{0, 599} {
		if id, sim := top(i); sim >= 0.999 {
			t.Errorf("vector %d, no longer stored, found: row %d (%.3f)", i, id, sim)
		}
	}
}
