package local

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/model"
)

// openIndexed opens a backend at path embedding with the synthetic
// embedder over c, whose index links a scope from minGraph vectors. The
// test closes it (or abandons it, to play a crash).
func openIndexed(t *testing.T, path string, e model.Embedder, minGraph int, more ...func(*annConfig)) *Backend {
	t.Helper()
	b, err := OpenBackend(context.Background(), path, WithEmbedder(e), withANN(func(c *annConfig) {
		c.minGraph = minGraph
		for _, f := range more {
			f(c)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scopeIDsOf(t *testing.T, b *Backend, keys ...string) []int64 {
	t.Helper()
	ids, err := b.scopeIDs(context.Background(), keys)
	if err != nil || len(ids) != len(keys) {
		t.Fatalf("scope ids of %v: %v, %v", keys, ids, err)
	}
	return ids
}

func mustNearest(t *testing.T, b *Backend, q []float32, ids []int64, k int) []rank.Ranked {
	t.Helper()
	rs, err := b.nearest(context.Background(), q, ids, k)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func rowidOf(t *testing.T, b *Backend, uri string) int64 {
	t.Helper()
	var r int64
	if err := b.db.QueryRow(`SELECT rowid FROM entries WHERE uri = ?`, uri).Scan(&r); err != nil {
		t.Fatal(uri, err)
	}
	return r
}

// TestIndexRecall: on 20,000 clustered vectors of 64 dimensions in two
// scopes, both big enough to be searched through their graphs, the index
// finds at least 95% of the exact scan's ten best, and scores what it
// finds as the scan does. (Under the race detector: 10,000 vectors.)
func TestIndexRecall(t *testing.T) {
	ctx := context.Background()
	perScope, queries := 10_000, 50
	if raceDetector {
		perScope, queries = 5_000, 25
	}
	c := newClustered(11, 64, 40, 16, 1, 0.3)
	b := openIndexed(t, filepath.Join(t.TempDir(), "m.db"), newSynth(c), defaultANN().minGraph)
	defer b.Close()
	loadVectors(t, b, c, "a", 0, perScope)
	loadVectors(t, b, c, "b", perScope, perScope)
	ids := scopeIDsOf(t, b, "project/a", "project/b")
	found, total := 0, 0
	for q := range queries {
		qv := c.query(uint64(q))
		got := mustNearest(t, b, qv, ids, 10)
		want, err := b.exactNearest(ctx, qv, ids, 10)
		if err != nil {
			t.Fatal(err)
		}
		exact := map[int64]float64{}
		for _, r := range want {
			exact[r.ID] = r.Score
		}
		for _, r := range got {
			if r.Score < float64(b.minSim) || r.Score <= 0 {
				t.Fatalf("query %d: hit %d scores %v", q, r.ID, r.Score)
			}
			if s, ok := exact[r.ID]; ok {
				found++
				if math.Abs(s-r.Score) > 1e-5 {
					t.Fatalf("query %d: row %d scores %v, the scan says %v", q, r.ID, r.Score, s)
				}
			}
		}
		total += len(want)
	}
	if n := b.ann.stats.built.Load(); n != 2 {
		t.Fatalf("%d graphs built, want 2", n)
	}
	for _, id := range ids {
		if s := b.ann.scope(id); !s.g.linked {
			t.Fatalf("scope %d is scanned, not searched through its graph", id)
		}
	}
	recall := float64(found) / float64(total)
	t.Logf("recall@10 = %.4f over %d exact hits", recall, total)
	if total < 10*queries || recall < 0.95 {
		t.Fatalf("recall@10 = %.4f over %d exact hits, want at least 0.95", recall, total)
	}
}

// TestIndexFollowsOtherHandles: what another handle on the same file adds,
// replaces or deletes is what this handle's next recall sees; a replaced
// row's old vector is never used.
func TestIndexFollowsOtherHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	c := newClustered(12, 32, 8, 8, 1, 0.3)
	a := openIndexed(t, path, newSynth(c), 64)
	defer a.Close()
	other := openIndexed(t, path, newSynth(c), 64)
	defer other.Close()
	plain, err := OpenBackend(ctx, path) // no embedder: its writes drop vectors
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	loadVectors(t, a, c, "p", 0, 500)
	ids := scopeIDsOf(t, a, "project/p")
	top := func(i int) rank.Ranked {
		t.Helper()
		rs := mustNearest(t, a, c.vector(uint64(i)), ids, 5)
		if len(rs) == 0 {
			t.Fatalf("nothing near vector %d", i)
		}
		return rs[0]
	}
	e7, e9, e11 := rowidOf(t, a, "memory://project/p/e7"), rowidOf(t, a, "memory://project/p/e9"), rowidOf(t, a, "memory://project/p/e11")
	if r := top(7); r.ID != e7 || r.Score < 0.999 {
		t.Fatalf("vector 7's nearest: %+v, want row %d", r, e7)
	}
	if !a.ann.scope(ids[0]).g.linked {
		t.Fatal("the scope is not searched through its graph")
	}

	// Replaced by another handle: the row keeps its rowid, with a new vector.
	m := memory.Over(other)
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, "memory://project/p/e7"), Content: "v900000"}); err != nil {
		t.Fatal(err)
	}
	want := float64(model.Cosine(c.vector(7), c.vector(900000)))
	for _, r := range mustNearest(t, a, c.vector(7), ids, 20) {
		if r.ID == e7 && math.Abs(r.Score-want) > 1e-5 {
			t.Fatalf("the replaced row scores %v, its old vector's score; its new one gives %v", r.Score, want)
		}
	}
	if r := top(900000); r.ID != e7 {
		t.Fatalf("the replacement's vector finds %+v, not row %d", r, e7)
	}

	// Added and deleted by another handle.
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, "memory://project/p/fresh"), Content: "v800000"}); err != nil {
		t.Fatal(err)
	}
	if r := top(800000); r.ID != rowidOf(t, a, "memory://project/p/fresh") {
		t.Fatalf("a new entry is not found: %+v", r)
	}
	if _, _, err := m.Forget(ctx, nil, memory.Selector{URI: "memory://project/p/e9"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range mustNearest(t, a, c.vector(9), ids, 20) {
		if r.ID == e9 {
			t.Fatal("a deleted row is still found")
		}
	}

	// Replaced by a handle without an embedder: the row has no vector now.
	if err := plain.Put(ctx, memory.Entry{URI: mustURI(t, "memory://project/p/e11"), Content: "v11 again, unembedded"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range mustNearest(t, a, c.vector(11), ids, 20) {
		if r.ID == e11 {
			t.Fatal("a row whose vector was dropped is still found")
		}
	}

	// The whole recall agrees: the new entry is found by its meaning.
	hits, _, err := memory.Over(a).Recall(ctx, nil, memory.Query{Text: "q1", Scopes: []string{"project/p"}, K: 3})
	if err != nil || len(hits) == 0 {
		t.Fatalf("recall: %+v, %v", hits, err)
	}
	// And this handle's index is the one that saw all of it, caught up
	// from the log, never rebuilt.
	if n := a.ann.stats.built.Load(); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}

// TestIndexPersists: a reopened backend searches the graph it saved; one
// that died before saving catches up from the log; a corrupt file or one
// of another model is rebuilt from the table, with the same results.
func TestIndexPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	c := newClustered(13, 32, 8, 8, 1, 0.3)
	e := newSynth(c)
	b := openIndexed(t, path, e, 64)
	loadVectors(t, b, c, "p", 0, 600)
	ids := scopeIDsOf(t, b, "project/p")
	queries := func(b *Backend) [][]rank.Ranked {
		var out [][]rank.Ranked
		for q := range 20 {
			out = append(out, mustNearest(t, b, c.query(uint64(q)), ids, 10))
		}
		return out
	}
	first := queries(b)
	file := b.ann.graphFile(ids[0])
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no graph file after close: %v", err)
	}

	// Reopened: the graph is read, not built.
	b = openIndexed(t, path, e, 64)
	if got := queries(b); !slices.EqualFunc(got, first, slices.Equal) {
		t.Fatalf("after reopening: %v, want %v", got, first)
	}
	if l, n := b.ann.stats.loaded.Load(), b.ann.stats.built.Load(); l != 1 || n != 0 {
		t.Fatalf("reopened: %d loaded, %d built; want the file loaded", l, n)
	}

	// Entries committed, then the process dies before saving the index.
	loadVectors(t, b, c, "p", 600, 10)
	b.db.Close() // no Close: nothing is saved

	b = openIndexed(t, path, e, 64)
	for i := 600; i < 610; i++ {
		rs := mustNearest(t, b, c.vector(uint64(i)), ids, 1)
		if len(rs) == 0 || rs[0].Score < 0.999 {
			t.Fatalf("entry %d, written before the crash, is not found: %+v", i, rs)
		}
	}
	if l, n := b.ann.stats.loaded.Load(), b.ann.stats.built.Load(); l != 1 || n != 0 {
		t.Fatalf("after the crash: %d loaded, %d built; want the old file caught up", l, n)
	}
	caughtUp := queries(b)
	b.db.Close()

	// A corrupt file is rebuilt from the table, with the same results.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(raw) / 3; i < len(raw)/3+16; i++ {
		raw[i] ^= 0x5a
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	b = openIndexed(t, path, e, 64)
	if got := queries(b); !slices.EqualFunc(got, caughtUp, slices.Equal) {
		t.Fatalf("after the rebuild: %v, want %v", got, caughtUp)
	}
	if l, n := b.ann.stats.loaded.Load(), b.ann.stats.built.Load(); l != 0 || n != 1 {
		t.Fatalf("corrupt file: %d loaded, %d built; want a rebuild", l, n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// Another model's handle given this model's file rebuilds too.
	other := model.NewEmbedder(synthEmbedder{c}, "another-model", model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
	b = openIndexed(t, path, other, 64)
	defer b.Close()
	raw, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.ann.graphFile(ids[0]), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if rs := mustNearest(t, b, c.query(0), ids, 10); len(rs) != 0 {
		t.Fatalf("another model's handle found %v among vectors it did not write", rs)
	}
	if l, n := b.ann.stats.loaded.Load(), b.ann.stats.built.Load(); l != 0 || n != 1 {
		t.Fatalf("another model's file: %d loaded, %d built; want a rebuild", l, n)
	}
}

// TestIndexAfterLogPruned: a handle whose position the log was pruned
// past compares its graph with the table instead of replaying the log.
func TestIndexAfterLogPruned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	c := newClustered(14, 32, 8, 8, 1, 0.3)
	keepOne := func(c *annConfig) { c.logKeep = 1 }
	a := openIndexed(t, path, newSynth(c), 64, keepOne)
	defer a.Close()
	loadVectors(t, a, c, "p", 0, 300)
	ids := scopeIDsOf(t, a, "project/p")
	mustNearest(t, a, c.query(0), ids, 5) // a builds at the log's head

	// Another handle writes enough to save its graph, pruning the log.
	w := openIndexed(t, path, newSynth(c), 64, keepOne)
	mustNearest(t, w, c.query(0), ids, 5)
	loadVectors(t, w, c, "p", 300, 400)
	e5 := rowidOf(t, w, "memory://project/p/e5")
	if _, err := w.db.Exec(`DELETE FROM entries WHERE uri = 'memory://project/p/e5'`); err != nil {
		t.Fatal(err)
	}
	mustNearest(t, w, c.query(0), ids, 5)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var floor int64
	if err := a.db.QueryRow(`SELECT min(seq) FROM vector_log`).Scan(&floor); err != nil || floor <= 2 {
		t.Fatalf("the log was not pruned: it starts at %d (%v)", floor, err)
	}

	for _, i := range []int{300, 699} {
		if rs := mustNearest(t, a, c.vector(uint64(i)), ids, 1); len(rs) == 0 || rs[0].Score < 0.999 {
			t.Fatalf("entry %d is not found: %+v", i, rs)
		}
	}
	for _, r := range mustNearest(t, a, c.vector(5), ids, 20) {
		if r.ID == e5 {
			t.Fatal("a row deleted behind the pruned log is still found")
		}
	}
	if n := a.ann.stats.reconciled.Load(); n != 1 {
		t.Fatalf("%d reconciliations, want 1", n)
	}
}

// TestIndexOfReplacedDatabase: a graph file left by a database deleted
// and created again at the same path is not this database's index, even
// when the new log has passed the old file's position.
func TestIndexOfReplacedDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	c := newClustered(15, 32, 8, 8, 1, 0.3)
	b := openIndexed(t, path, newSynth(c), 64)
	loadVectors(t, b, c, "p", 0, 100)
	ids := scopeIDsOf(t, b, "project/p")
	mustNearest(t, b, c.query(0), ids, 5)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"m.db", "m.db-wal", "m.db-shm"} {
		os.Remove(filepath.Join(dir, f))
	}

	b = openIndexed(t, path, newSynth(c), 64)
	defer b.Close()
	loadVectors(t, b, c, "p", 1000, 300) // other vectors, more log lines
	if rs := mustNearest(t, b, c.vector(7), ids, 1); len(rs) == 1 && rs[0].Score > 0.999 {
		t.Fatalf("the old database's vector 7 is found: %+v", rs)
	}
	if l, n := b.ann.stats.loaded.Load(), b.ann.stats.built.Load(); l != 0 || n != 1 {
		t.Fatalf("%d loaded, %d built; want the old file ignored", l, n)
	}
}
