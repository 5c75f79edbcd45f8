package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/memorytest"
)

// The recall benchmarks' data: entry i of the corpus has the vector
// benchVectors().vector(i), 384 dimensions around 256 centres; a recall
// names three of the ten scopes.
const benchDims = 384

var benchScopes = []string{"project/p1", "project/p4", "project/p7"}

func benchVectors() *clustered { return newClustered(42, benchDims, 256, 16, 1, 0.3) }

// fixtureInfo is what a fixture records about its making.
type fixtureInfo struct {
	Entries   int
	Load      time.Duration // entries and vectors written
	Index     time.Duration // the searched scopes' graphs built and saved
	CreatedAt time.Time
}

// benchFixture returns the path of a database of memorytest.Corpus(n) with every
// entry's vector and the graphs of the searched scopes saved beside it.
// It is built once under os.TempDir(), keyed by everything that shapes
// it, and reused by later runs (delete the directory to rebuild).
func benchFixture(b *testing.B, n int) string {
	b.Helper()
	cfg := defaultANN()
	key := fmt.Sprintf("rath-memory-local-bench/schema%d-graph%d-m%d-efbuild%d-entries%d-dims%d-seed42", schemaVersion, graphVersion, cfg.m, cfg.efBuild, n, benchDims)
	dir := filepath.Join(os.TempDir(), key)
	path := filepath.Join(dir, "m.db")
	var info fixtureInfo
	if raw, err := os.ReadFile(filepath.Join(dir, "fixture.json")); err == nil && json.Unmarshal(raw, &info) == nil {
		b.Logf("fixture %s: reused (built %s: entries and vectors in %s, the searched scopes' graphs in %s)",
			dir, info.CreatedAt.Format(time.DateTime), info.Load.Round(time.Second), info.Index.Round(time.Second))
		return path
	}
	building := fmt.Sprintf("%s.building-%d", dir, os.Getpid())
	os.RemoveAll(building)
	if err := os.MkdirAll(building, 0o700); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	be, err := OpenBackend(ctx, filepath.Join(building, "m.db"), WithEmbedder(newSynth(benchVectors())))
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	c := benchVectors()
	bulkLoad(b, be, memorytest.Corpus(n), func(i int) []float32 { return c.vector(uint64(i)) })
	info.Load = time.Since(t0)
	t0 = time.Now()
	ids, err := be.scopeIDs(ctx, benchScopes)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := be.nearest(ctx, c.query(0), ids, 10); err != nil {
		b.Fatal(err)
	}
	if err := be.Close(); err != nil { // waits for the graphs' saves
		b.Fatal(err)
	}
	if err := be.ann.stats.saveErr.Load(); err != nil {
		b.Fatal(*err)
	}
	info.Index, info.Entries, info.CreatedAt = time.Since(t0), n, time.Now()
	raw, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(building, "fixture.json"), raw, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(building, dir); err != nil && !errors.Is(err, fs.ErrExist) {
		os.RemoveAll(building) // another run made it first: use that one
		if _, serr := os.Stat(filepath.Join(dir, "fixture.json")); serr != nil {
			b.Fatal(err)
		}
	}
	b.Logf("fixture %s: built (entries and vectors in %s, the searched scopes' graphs in %s)", dir, info.Load.Round(time.Second), info.Index.Round(time.Second))
	return path
}

// BenchmarkRecall: recalls naming three of ten scopes, k=5, over n
// entries; reports the median and 99th percentile latency.
//
//   - lexical: no embedder; two-word queries, one word from the 300 most
//     frequent of the corpus's Zipf vocabulary, one from the 3,000.
//   - semantic: 384-dimension vectors; the query text is "q<i>", which no
//     entry holds (its full-text search finds nothing quickly), and embeds
//     to the distribution's i-th query vector, so the time is the vector
//     path's: the index catching up (one log check), searching three
//     graphs, loading the hits. Also reports recall@10 of nearest against
//     the exact scan over the same scopes, on 50 queries.
//   - hybrid: the lexical queries with an embedder: both rankings, fused.
//   - hard=overlapping, hard=lowrank: one scope of the hard sets (see
//     hard_test.go), vector search alone; see benchHard.
func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("backend=local/entries=%d", n), func(b *testing.B) {
			b.Run("lexical", func(b *testing.B) { benchRecall(b, benchFixture(b, n), false, lexicalQuery) })
			b.Run("semantic", func(b *testing.B) { benchRecall(b, benchFixture(b, n), true, semanticQuery) })
			b.Run("hybrid", func(b *testing.B) { benchRecall(b, benchFixture(b, n), true, lexicalQuery) })
		})
	}
	for _, n := range []int{20_000, 100_000} {
		for _, set := range hardSets {
			b.Run(fmt.Sprintf("backend=local/hard=%s/entries=%d", set.name, n), func(b *testing.B) { benchHard(b, set.gen(38), n) })
		}
	}
}

func lexicalQuery(rng *rand.Rand) string {
	return fmt.Sprintf("w%d w%d", rng.IntN(300), rng.IntN(3000))
}

func semanticQuery(rng *rand.Rand) string { return fmt.Sprint("q", 1000+rng.IntN(1<<30)) }

func benchRecall(b *testing.B, path string, embedded bool, query func(*rand.Rand) string) {
	ctx := context.Background()
	var opts []Option
	if embedded {
		opts = append(opts, WithEmbedder(newSynth(benchVectors())))
	}
	be, err := OpenBackend(ctx, path, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	m := memory.Over(be)
	recall := func(q string) {
		if _, _, err := m.Recall(ctx, nil, memory.Query{Text: q, Scopes: benchScopes, K: 5}); err != nil {
			b.Fatal(err)
		}
	}
	if embedded {
		t0 := time.Now()
		recall("q0") // loads the graphs
		b.Logf("graphs of %d scopes ready in %s (%d read from their files, %d built)", len(benchScopes), time.Since(t0).Round(time.Millisecond),
			be.ann.stats.loaded.Load(), be.ann.stats.built.Load())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var lat []time.Duration
	for b.Loop() {
		q := query(rng)
		t0 := time.Now()
		recall(q)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	if embedded {
		b.ReportMetric(recallAt10(b, be, path), "recall@10")
	}
}

// recallAt10 is the share of the exact scan's ten best rows that nearest
// finds, over 50 queries; the scan's answers are cached beside the
// fixture (they take a second each at a million entries).
func recallAt10(b *testing.B, be *Backend, path string) float64 {
	ctx := context.Background()
	c := benchVectors()
	ids, err := be.scopeIDs(ctx, benchScopes)
	if err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(filepath.Dir(path), "exact-top10-q50.json")
	var exact [][]int64
	if raw, err := os.ReadFile(cache); err != nil || json.Unmarshal(raw, &exact) != nil || len(exact) != 50 {
		exact = make([][]int64, 50)
		for q := range exact {
			rs, err := be.exactNearest(ctx, c.query(uint64(q)), ids, 10)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range rs {
				exact[q] = append(exact[q], r.ID)
			}
		}
		raw, _ := json.Marshal(exact)
		os.WriteFile(cache, raw, 0o600)
	}
	found, total := 0, 0
	for q, want := range exact {
		rs, err := be.nearest(ctx, c.query(uint64(q)), ids, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if slices.Contains(want, r.ID) {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

// BenchmarkRemember: durable (fsync'd) writes of 20-word entries by
// concurrent writers, each with its own handle (its own *sql.DB, as
// separate processes have); reports entries written per second by all of
// them. Without an embedder, and (embedded/) with the synthetic
// 384-dimension one: a vector and its change-log line more per write.
func BenchmarkRemember(b *testing.B) {
	for _, v := range []struct {
		name string
		opts []Option
	}{{"", nil}, {"embedded/", []Option{WithEmbedder(newSynth(benchVectors()))}}} {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("backend=local/%swriters=%d", v.name, writers), func(b *testing.B) { benchRemember(b, writers, v.opts) })
		}
	}
}

// benchRemember writes b.N entries through writers handles at once.
func benchRemember(b *testing.B, writers int, opts []Option) {
	path := filepath.Join(b.TempDir(), "m.db")
	ms := make([]memory.Memory, writers)
	for w := range ms {
		m, err := Open(context.Background(), path, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		ms[w] = m
	}
	es := memorytest.Corpus(1000)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				e := es[i%len(es)]
				e.URI.Path = fmt.Sprint("r", i)
				if _, err := m.Remember(context.Background(), nil, e); err != nil {
					failed.Store(&err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
