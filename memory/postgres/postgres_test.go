package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/memory/memorytest"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
)

var ctx = context.Background()

func serverURL(t testing.TB) string { return pgtest.Server(t) }

func freshDB(t testing.TB) string { return pgtest.FreshDB(t, "rath_mem") }

func admin(t testing.TB, dbURL, sql string, args ...any) { pgtest.Exec(t, dbURL, sql, args...) }

// withParam adds a query parameter to a URL.
func withParam(raw, k, v string) string {
	u, _ := url.Parse(raw)
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// quiet is a logger for tests that do not look at what Open says.
var quiet = slog.New(slog.DiscardHandler)

// needPgvector skips a test of the HNSW path on a server without pgvector,
// unless the environment requires it (scripts/test installs it).
func needPgvector(t *testing.T, dbURL string) {
	t.Helper()
	b, err := OpenBackend(ctx, dbURL, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Index() == "hnsw" {
		return
	}
	if os.Getenv("RATH_TEST_PGVECTOR") != "" {
		t.Fatalf("RATH_TEST_PGVECTOR is set, but the server offers no pgvector: %s", b.Describe())
	}
	t.Skipf("the server has no pgvector (%s); scripts/test builds it from Debian's source package", b.why)
}

// modes are the ways the backend can run, each on its own database.
var modes = []struct {
	name     string
	vectors  string
	embedder func() model.Embedder
}{
	{"lexical", VectorsExact, nil},
	{"hybrid-exact", VectorsExact, func() model.Embedder { return scripted.Hashed(256) }},
	{"hybrid-hnsw", VectorsHNSW, func() model.Embedder { return scripted.Hashed(256) }},
}

func openMode(t *testing.T, dbURL, vectors string, emb func() model.Embedder) memory.Memory {
	t.Helper()
	o := memory.Options{Logger: quiet}
	if emb != nil {
		o.Embedder = emb()
	}
	m, err := memory.Open(ctx, withParam(dbURL, "vectors", vectors), o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConformance(t *testing.T) {
	serverURL(t)
	for _, md := range modes {
		t.Run(md.name, func(t *testing.T) {
			memorytest.Run(t, func(t *testing.T) memory.Memory {
				db := freshDB(t)
				if md.vectors == VectorsHNSW {
					needPgvector(t, db)
				}
				return openMode(t, db, md.vectors, md.embedder)
			})
		})
	}
}

// TestShared races two handles, each its own pool, on one database, as two
// workers of a cluster would.
func TestShared(t *testing.T) {
	serverURL(t)
	for _, md := range modes {
		t.Run(md.name, func(t *testing.T) {
			memorytest.RunShared(t, func(t *testing.T) (memory.Memory, memory.Memory) {
				db := freshDB(t)
				if md.vectors == VectorsHNSW {
					needPgvector(t, db)
				}
				return openMode(t, db, md.vectors, md.embedder), openMode(t, db, md.vectors, md.embedder)
			})
		})
	}
}

// TestRegistered: memory.Open finds the backend by scheme, and Open says
// which vector search it uses.
func TestRegistered(t *testing.T) {
	db := freshDB(t)
	var log bytes.Buffer
	m, err := memory.Open(ctx, withParam(db, "vectors", "exact"), memory.Options{Embedder: scripted.Hashed(8), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d := memory.Describe(m)
	if !strings.HasPrefix(d, "postgres ") || !strings.Contains(d, "exact scan (vectors=exact)") || !strings.Contains(d, "english") {
		t.Fatalf("Describe = %q", d)
	}
	if !strings.Contains(log.String(), "exact scan") {
		t.Fatalf("Open logged %q, not how it searches vectors", log.String())
	}
	if strings.Contains(d, "@") || strings.Contains(d, "password") {
		t.Fatalf("Describe shows credentials: %q", d)
	}
}

// TestRareWordsWeighMore: with statistics, an entry holding a query's rare
// word ranks above entries holding only its common word, however often.
func TestRareWordsWeighMore(t *testing.T) {
	db := freshDB(t)
	m := openMode(t, db, VectorsExact, nil)
	defer m.Close()
	for i := range 200 {
		c := fmt.Sprintf("deploy pipeline deploy notes %d", i)
		if i == 150 {
			c = "the pipeline for the ocelot service"
		}
		if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.URI{Scope: "project", ScopeID: "p", Path: fmt.Sprint("n", i)}, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	admin(t, db, "ANALYZE rath_memory.entries")
	hits, _, err := m.Recall(ctx, nil, memory.Query{Text: "pipeline ocelot", Scopes: []string{"project/p"}, K: 3})
	if err != nil || len(hits) != 3 {
		t.Fatalf("hits = %d, %v", len(hits), err)
	}
	if hits[0].URI.Path != "n150" || hits[0].Score <= hits[1].Score {
		t.Fatalf("the rare word's entry ranks %s (%.4f) vs %s (%.4f)", hits[0].URI.Path, hits[0].Score, hits[1].URI.Path, hits[1].Score)
	}
}

// TestLanguage: stemming follows the configuration, fixed by the first
// opener; a URL asking for another is refused, a bad one named.
func TestLanguage(t *testing.T) {
	db := freshDB(t)
	m := openMode(t, db, VectorsExact, nil)
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/p/a"), Content: "The workers were running migrations."}); err != nil {
		t.Fatal(err)
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: "worker runs migration", Scopes: []string{"project/p"}}); len(hits) != 1 {
		t.Fatalf("english stemming: %+v", hits)
	}
	m.Close()
	if _, err := memory.Open(ctx, withParam(db, "language", "german"), memory.Options{Logger: quiet}); !errors.Is(err, ErrLanguage) {
		t.Fatalf("another language: %v", err)
	}
	fresh := freshDB(t)
	if _, err := memory.Open(ctx, withParam(fresh, "language", "klingon"), memory.Options{Logger: quiet}); err == nil || !strings.Contains(err.Error(), "klingon") {
		t.Fatalf("a bad language: %v", err)
	}
	simple, err := memory.Open(ctx, withParam(fresh, "language", "simple"), memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer simple.Close()
	if _, err := simple.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/p/a"), Content: "The workers were running."}); err != nil {
		t.Fatal(err)
	}
	if hits, _, _ := simple.Recall(ctx, nil, memory.Query{Text: "worker", Scopes: []string{"project/p"}}); len(hits) != 0 {
		t.Fatalf("simple does not stem, yet: %+v", hits)
	}
	if hits, _, _ := simple.Recall(ctx, nil, memory.Query{Text: "the", Scopes: []string{"project/p"}}); len(hits) != 1 {
		t.Fatalf("simple keeps stop words, yet: %+v", hits)
	}
}

// TestBadURL: parameters this package reads are checked.
func TestBadURL(t *testing.T) {
	db := freshDB(t)
	for _, c := range [][2]string{{"vectors", "faiss"}, {"min_similarity", "2"}, {"min_similarity", "x"}} {
		if _, err := memory.Open(ctx, withParam(db, c[0], c[1]), memory.Options{Logger: quiet}); err == nil || !strings.Contains(err.Error(), c[0]) {
			t.Errorf("%s=%s: %v", c[0], c[1], err)
		}
	}
}

// TestMixedModes: a handle that scans exactly and one that uses the index
// share one database; what either writes, the other finds by similarity,
// and the index is what the HNSW handle's query plan uses.
func TestMixedModes(t *testing.T) {
	db := freshDB(t)
	needPgvector(t, db)
	emb := func() model.Embedder { return scripted.Hashed(64) }
	exact, hnsw := openMode(t, db, VectorsExact, emb), openMode(t, db, VectorsHNSW, emb)
	defer exact.Close()
	defer hnsw.Close()
	if _, err := exact.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/p/a"), Content: "ocelot lynx"}); err != nil {
		t.Fatal(err)
	}
	if _, err := hnsw.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/p/b"), Content: "heron egret"}); err != nil {
		t.Fatal(err)
	}
	// Each handle finds what the other wrote.
	for name, m := range map[string]memory.Memory{"exact": exact, "hnsw": hnsw} {
		for q, want := range map[string]string{"lynx ocelot": "a", "egret heron": "b"} {
			hits, _, err := m.Recall(ctx, nil, memory.Query{Text: q, Scopes: []string{"project/p"}, K: 1})
			if err != nil || len(hits) != 1 || hits[0].URI.Path != want {
				t.Fatalf("%s handle, %q: %+v, %v", name, q, hits, err)
			}
		}
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var count int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM rath_memory.vectors WHERE embedding IS NOT NULL`).Scan(&count); err != nil || count != 2 {
		t.Fatalf("%d rows have the pgvector column filled, %v", count, err)
	}
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	rows, err := conn.Query(ctx, fmt.Sprintf(`EXPLAIN SELECT entry_id FROM rath_memory.vectors WHERE model = %s AND scope = ANY($1)
		ORDER BY embedding::vector(64) <=> $2::vector(64) LIMIT 5`, literal(rank.EmbedderKey(scripted.Hashed(64)))), []string{"project/p"}, "["+strings.Repeat("0.1,", 63)+"0.1]")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		rows.Scan(&line)
		plan.WriteString(line + "\n")
	}
	if !strings.Contains(plan.String(), indexName(rank.EmbedderKey(scripted.Hashed(64)), 64)) {
		t.Fatalf("the nearest-neighbour query does not use the HNSW index:\n%s", plan.String())
	}
}

// TestCommonWordsPruned: ranking a query's rarer words first, and the whole
// query only when that cannot settle the k best, gives the same answer as
// ranking the whole query.
func TestCommonWordsPruned(t *testing.T) {
	db := freshDB(t)
	be, err := OpenBackend(ctx, withParam(db, "vectors", VectorsExact), memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	if err := bulkPut(ctx, be, memorytest.Corpus(3000)); err != nil {
		t.Fatal(err)
	}
	admin(t, db, "ANALYZE rath_memory.entries")
	scopes := []string{"project/p1", "project/p4"}
	pruned := 0
	for i := range 60 {
		q := fmt.Sprintf("w%d w%d", i%12, 40+i*37%2000)
		got, err := be.lexical(ctx, q, scopes, 5)
		if err != nil {
			t.Fatal(err)
		}
		lex, _ := be.lexemes(ctx, q)
		weights, _ := be.idf(ctx, lex)
		qs := make([]string, len(lex))
		for j, l := range lex {
			qs[j] = tsquery(l)
		}
		want, err := be.scoreQuery(ctx, scopes, qs, weights, strings.Join(qs, " | "), 5)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: pruned %v, whole query %v", q, got, want)
		}
		if weights[0] < commonWeight != (weights[1] < commonWeight) {
			pruned++
		}
	}
	if pruned < 10 {
		t.Fatalf("only %d of the queries mixed a common and a rare word: the test checks little", pruned)
	}
}

// TestProcesses: four processes write one memory at once.
func TestProcesses(t *testing.T) {
	db := freshDB(t)
	memorytest.RunProcesses(t, db, "TestProcessesChild", 4)
}

// TestProcessesChild is TestProcesses's child process; alone it does
// nothing.
func TestProcessesChild(t *testing.T) { memorytest.Child(t) }
