package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/memory/internal/text"
	"github.com/openrath/rath/memory/memorytest"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
)

// benchDB returns a database holding the corpus of n entries, embedded by
// emb (nil: none), with statistics and (with pgvector) the HNSW index
// built. It is kept on the server, named after its contents, so later
// runs reuse it; a half-built one is dropped and built again.
func benchDB(b *testing.B, n int, emb model.Embedder) string {
	b.Helper()
	server := serverURL(b)
	name := fmt.Sprintf("rath_bench_mem_%d", n)
	if emb != nil {
		name += "_" + strings.NewReplacer(":", "_", "-", "_").Replace(rank.EmbedderKey(emb))
	}
	u, _ := url.Parse(server)
	u.Path = "/" + name
	db := u.String()
	ctx := context.Background()
	if c, err := pgx.Connect(ctx, db); err == nil {
		var done bool
		err := c.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM rath_memory.meta WHERE key = 'bench_complete')`).Scan(&done)
		c.Close(ctx)
		if err == nil && done {
			return db
		}
		admin(b, server, "DROP DATABASE "+name+" WITH (FORCE)")
	}
	admin(b, server, "CREATE DATABASE "+name)
	t0 := time.Now()
	be, err := OpenBackend(ctx, db, memory.Options{Embedder: emb, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	es := memorytest.Corpus(n)
	const batch = 2000
	for lo := 0; lo < n; lo += batch {
		if err := bulkPut(ctx, be, es[lo:min(lo+batch, n)]); err != nil {
			b.Fatal(err)
		}
	}
	c, err := pgx.Connect(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	if emb != nil && be.hnsw {
		dim := 0
		if err := c.QueryRow(ctx, `SELECT array_length(vec, 1) FROM rath_memory.vectors LIMIT 1`).Scan(&dim); err != nil {
			b.Fatal(err)
		}
		// Built once, with memory enough to hold the graph, before the
		// backend would build it with the server's default.
		if _, err := c.Exec(ctx, `SET maintenance_work_mem = '2GB'`); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Exec(ctx, fmt.Sprintf(`CREATE INDEX %s ON rath_memory.vectors USING hnsw ((embedding::vector(%d)) vector_cosine_ops) WHERE model = %s`,
			indexName(rank.EmbedderKey(emb), dim), dim, literal(rank.EmbedderKey(emb)))); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []string{`VACUUM ANALYZE rath_memory.entries`, `VACUUM ANALYZE rath_memory.vectors`,
		`INSERT INTO rath_memory.meta(key, value) VALUES('bench_complete', 'yes')`} {
		if _, err := c.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built %s in %v", name, time.Since(t0).Round(time.Second))
	return db
}

// bulkPut writes entries as Put does, many per statement, for fixtures.
func bulkPut(ctx context.Context, be *Backend, es []memory.Entry) error {
	var uris, scopes, contents, hashes, folded []string
	for _, e := range es {
		uris, scopes, contents, hashes, folded = append(uris, e.URI.String()), append(scopes, e.URI.ScopeKey()),
			append(contents, e.Content), append(hashes, e.Hash()), append(folded, text.Fold(e.Content))
	}
	rows, err := be.pool.Query(ctx, `INSERT INTO rath_memory.entries(uri, scope, content, hash, provenance, tsv)
		SELECT u, s, c, h, '{}', to_tsvector($5::regconfig, f) FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $6::text[]) AS x(u, s, c, h, f)
		RETURNING id, scope, hash`, uris, scopes, contents, hashes, be.language, folded)
	if err != nil {
		return err
	}
	type row struct {
		id          int64
		scope, hash string
	}
	var ids []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.scope, &r.hash); err != nil {
			return err
		}
		ids = append(ids, r)
	}
	if err := rows.Err(); err != nil || be.embedder == nil {
		return err
	}
	vs, err := be.embedder.Embed(ctx, contents)
	if err != nil {
		return err
	}
	src := make([][]any, len(ids))
	for i, r := range ids {
		src[i] = []any{r.id, r.scope, rank.EmbedderKey(be.embedder), r.hash, vs.Vectors[i], encodeVector(vs.Vectors[i])}
	}
	_, err = be.pool.CopyFrom(ctx, pgx.Identifier{"rath_memory", "vectors"}, []string{"entry_id", "scope", "model", "hash", "vec", "raw"}, pgx.CopyFromRows(src))
	return err
}

// recallBench measures recalls of two-word queries (one word from the 300
// most frequent, one from the 3,000) over three of the ten scopes, k=5,
// and reports the median and 99th percentile latency.
func recallBench(b *testing.B, m memory.Memory) {
	rng := rand.New(rand.NewPCG(3, 4))
	scopes := []string{"project/p1", "project/p4", "project/p7"}
	var lat []time.Duration
	for b.Loop() {
		q := fmt.Sprintf("w%d w%d", rng.IntN(300), rng.IntN(3000))
		t0 := time.Now()
		if _, _, err := m.Recall(context.Background(), nil, memory.Query{Text: q, Scopes: scopes, K: 5}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
}

// BenchmarkRecall: lexical recall over 100,000 entries; hybrid recall with
// 384-dimension embeddings through the HNSW index (when the server has
// pgvector), with the index's recall@10 against the exact scan; and the
// exact scan's hybrid recall over 10,000.
func BenchmarkRecall(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	b.Run(fmt.Sprintf("backend=postgres/entries=%d/lexical", n), func(b *testing.B) {
		m, err := Open(ctx, benchDB(b, n, nil), memory.Options{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		recallBench(b, m)
	})
	b.Run(fmt.Sprintf("backend=postgres/entries=%d/hybrid-384", n), func(b *testing.B) {
		emb := scripted.Hashed(384)
		be, err := OpenBackend(ctx, withParam(benchDB(b, n, emb), "vectors", VectorsHNSW), memory.Options{Embedder: emb, Logger: quiet})
		if err != nil {
			b.Skipf("no pgvector: %v", err)
		}
		defer be.Close()
		r := indexRecall(b, be, 20)
		recallBench(b, memory.Over(be))
		b.ReportMetric(r, "recall@10") // after the loop, which resets metrics
	})
	b.Run(fmt.Sprintf("backend=postgres/entries=%d/hybrid-384-clustered", n), func(b *testing.B) {
		emb := newClustered(384)
		be, err := OpenBackend(ctx, withParam(benchDB(b, n, emb), "vectors", VectorsHNSW), memory.Options{Embedder: emb, Logger: quiet})
		if err != nil {
			b.Skipf("no pgvector: %v", err)
		}
		defer be.Close()
		r := indexRecall(b, be, 50)
		recallBench(b, memory.Over(be))
		b.ReportMetric(r, "recall@10")
	})
	b.Run("backend=postgres/entries=10000/hybrid-384-exact", func(b *testing.B) {
		emb := scripted.Hashed(384)
		m, err := Open(ctx, withParam(benchDB(b, 10_000, emb), "vectors", VectorsExact), memory.Options{Embedder: emb, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		recallBench(b, m)
	})
}

// indexRecall is the share of the exact scan's 10 nearest that the index
// returns (counting an entry as near as the exact tenth as one of them),
// over queries.
func indexRecall(b *testing.B, be *Backend, queries int) float64 {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	scopes := []string{"project/p1", "project/p4", "project/p7"}
	found, total := 0, 0
	saved := be.minSim
	be.minSim = -1 // compare the rankings, not the cut-off
	defer func() { be.minSim = saved }()
	for range queries {
		qv, err := be.embed(ctx, fmt.Sprintf("w%d w%d", rng.IntN(300), rng.IntN(3000)))
		if err != nil {
			b.Fatal(err)
		}
		approx, err := be.nearestHNSW(ctx, qv, scopes, 10)
		if err != nil {
			b.Fatal(err)
		}
		exact, err := be.nearestExact(ctx, qv, scopes, 10)
		if err != nil {
			b.Fatal(err)
		}
		// Tie-aware: hashed embeddings give many entries the same
		// similarity, and any of them is as near as another.
		if len(exact) == 0 {
			continue
		}
		kth := exact[len(exact)-1].Score
		hit := 0
		for _, r := range approx {
			if r.Score >= kth-1e-5 {
				hit++
			}
		}
		found += min(hit, len(exact))
		total += len(exact)
	}
	return float64(found) / float64(max(total, 1))
}

// BenchmarkRemember: durable writes of 20-word entries, by one writer and
// by 16 at once on one handle, lexical and with 384-dimension embeddings.
func BenchmarkRemember(b *testing.B) {
	for _, emb := range []model.Embedder{nil, scripted.Hashed(384)} {
		for _, writers := range []int{1, 16} {
			name := fmt.Sprintf("backend=postgres/writers=%d", writers)
			if emb != nil {
				name += "/embedded-384"
			}
			b.Run(name, func(b *testing.B) {
				m, err := Open(context.Background(), freshDB(b), memory.Options{Embedder: emb, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				es := memorytest.Corpus(1000)
				var next atomic.Int64
				write := func() {
					i := next.Add(1)
					e := es[i%int64(len(es))]
					e.URI.Path = fmt.Sprint("r", i)
					if _, err := m.Remember(context.Background(), nil, e); err != nil {
						b.Error(err)
					}
				}
				t0 := time.Now()
				if writers == 1 {
					for b.Loop() {
						write()
					}
				} else {
					b.SetParallelism((writers + 1) / 2) // 2 CPUs here: parallelism × GOMAXPROCS writers
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							write()
						}
					})
				}
				b.ReportMetric(float64(next.Load())/time.Since(t0).Seconds(), "entries/s")
			})
		}
	}
}
