package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
)

// annConfig tunes a backend's vector index.
type annConfig struct {
	minGraph int   // a scope holding fewer vectors is scanned exactly
	m        int   // HNSW links per node (2m on layer 0)
	efBuild  int   // HNSW candidates kept while linking a node
	efSearch int   // HNSW candidates kept while searching (at least k)
	logKeep  int64 // change-log rows kept behind a saved graph's position
}

// defaultANN (see WithEfSearch, WithExactScanBelow, WithGraph): below
// 4,096 vectors a scan of a scope takes about half a millisecond and is
// exact. m 16 and efBuild 100 with efSearch 64 found every one of the
// exact top ten (recall@10 1.000) on the semantic recall benchmark's
// data — 256 well-separated clusters, three scopes of 10,000 — but not
// on harder data of 384 dimensions (hard_test.go) with queries drawn
// from the distribution. Recall@10 of the graph search at efSearch 64,
// 128 and 256 (BenchmarkRecall, 200 queries):
//
//	overlapping clusters, 20,000:  0.999  1.000  1.000
//	overlapping clusters, 100,000: 0.942  0.989  0.998 (64: one query found none of its ten)
//	low-rank, 20,000:              0.968  0.9945 1.000
//	low-rank, 100,000:             0.9125 0.9825 0.9975
//
// Only 256 reaches 0.99 on both at 100,000, hence efSearch 256; a
// search costs about twice 128's (low-rank, 100,000: p50 2.2 ms at 128).
// Building with efBuild 64 was 1.6 times faster, but reached 0.970 on
// the benchmark's data (0.996 with efSearch 128): some nodes were left
// where searches do not reach them. Filling each node's links up to m
// with the heuristic's rejects (the paper's keepPrunedConnections) did
// worse: 0.936, and slower.
func defaultANN() annConfig {
	return annConfig{minGraph: 4096, m: 16, efBuild: 100, efSearch: 256, logKeep: 100_000}
}

// annIndex is a backend's in-memory nearest-neighbour index: for each
// scope a recall names, the vectors of the backend's embedding model, in a
// graph (see graph) that is linked once the scope is big enough.
//
// Other handles and processes write the same database, so the vectors
// table is the truth and the index a cache of it: triggers on vectors
// append each changed row to vector_log, and before a search each scope's
// graph is brought to the log's head — a row in the log is looked up
// again and added, replaced or removed. One `SELECT max(seq)` per recall
// tells whether anything changed at all.
//
// A linked graph persists beside the database (see graphFile) with the log
// position it reflects; a later open loads it and catches up from the log,
// so a process that dies between a commit and a save loses nothing. A
// missing, stale or corrupt file, or one older than the log's pruned
// prefix, costs a rebuild (or a full comparison with the table), never an
// error. A scope is loaded on its first recall, not on open: a process
// that only writes never pays for it.
//
// Costs: a loaded scope stays in memory until Close, about 4 bytes a
// dimension plus 140 a vector (a million 384-dimension vectors: 1.7 GB);
// each handle has its own. Building a graph takes about 0.3–0.8 ms a
// vector on the reference machine, so a scope of 100,000 takes a minute
// when it has no usable file. A save holds the scope's read lock while it
// writes, so a catch-up waits for it (saves come every 256 + 1/16 of the
// scope's changes). A graph whose dead nodes pass half its live ones is
// rebuilt beside it (rebuildLater), without the scope's lock: recalls
// keep answering from the old graph until the new one is swapped in.
type annIndex struct {
	db    *sql.DB
	dir   string
	model string
	cfg   annConfig

	mu     sync.Mutex
	scopes map[int64]*scopeIndex
	origin string // the database's vector_origin id, once read

	saves    sync.WaitGroup
	rebuilds sync.WaitGroup // graphs being rebuilt beside their scopes' (see rebuildLater)
	closing  atomic.Bool    // close has begun: rebuilds give up
	stats    annStats

	beforeSwap func() // tests: called by a rebuild once linked, before it takes the scope's lock
}

// annStats counts what the index did, for tests and diagnostics.
type annStats struct {
	loaded     atomic.Int64          // graphs read from their files
	built      atomic.Int64          // graphs built from the vectors table
	reconciled atomic.Int64          // graphs compared row by row with the table (log pruned past them)
	saved      atomic.Int64          // graph files written
	saveErr    atomic.Pointer[error] // the last failed save's error
	widened    atomic.Int64          // searches answered by the wider graph search
	exact      atomic.Int64          // searches answered by the exact fallback
	rebuilt    atomic.Int64          // graphs rebuilt beside their scopes' and swapped in
}

// scopeIndex is one scope's graph and the log position it reflects.
type scopeIndex struct {
	id      int64
	mu      sync.RWMutex
	g       *graph // nil until loaded
	seq     int64
	unsaved atomic.Int64 // changes since the graph file was written or read
	saving  atomic.Bool
	// rebuilding: a graph is being rebuilt beside g.
	rebuilding atomic.Bool
}

func newANN(db *sql.DB, dir, model string, cfg annConfig) *annIndex {
	return &annIndex{db: db, dir: dir, model: model, cfg: cfg, scopes: map[int64]*scopeIndex{}}
}

// scope returns scope id's index, empty until its first search.
func (a *annIndex) scope(id int64) *scopeIndex {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.scopes[id]
	if !ok {
		s = &scopeIndex{id: id}
		a.scopes[id] = s
	}
	return s
}

// dbOrigin returns the database's vector_origin id.
func (a *annIndex) dbOrigin(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.origin == "" {
		var id []byte
		if err := a.db.QueryRowContext(ctx, `SELECT id FROM vector_origin`).Scan(&id); err != nil {
			return "", fmt.Errorf("the database's origin id: %w", err)
		}
		a.origin = string(id)
	}
	return a.origin, nil
}

// head is the change log's last position (0 when empty).
func head(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int64, error) {
	var h sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT max(seq) FROM vector_log`).Scan(&h)
	return h.Int64, err
}

// search returns up to k rows of scope id most similar to unit vector q,
// best first, after bringing the scope's graph to log position at least
// h, each with how it was found (see answer).
func (a *annIndex) search(ctx context.Context, id, h int64, q []float32, k int, minSim float32) ([]rank.Ranked, error) {
	s := a.scope(id)
	s.mu.RLock()
	if s.g == nil || s.seq < h {
		s.mu.RUnlock()
		s.mu.Lock()
		err := a.catchUp(ctx, s, h)
		s.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("vector index of scope %d: %w", id, err)
		}
		s.mu.RLock()
	}
	defer s.mu.RUnlock()
	cs, via := a.answer(s.g, q, k, minSim)
	out := make([]rank.Ranked, len(cs))
	for i, c := range cs {
		out[i] = rank.Ranked{ID: s.g.keys[c.id], Score: float64(cosineUnit(q, s.g.vec(c.id))), Via: via}
	}
	return out, nil
}

// widen is how many times efSearch's candidates the fallback's second
// graph search keeps.
const widen = 4

// answer searches g for the k nodes most similar to q. An unlinked graph
// is scanned. A linked one is searched keeping efSearch candidates; if
// fewer than k of the nodes found score minSim (the search may have
// started in the wrong region and never left it, and the recall would
// silently return nothing), it is searched again keeping widen times as
// many, and if that too finds fewer, scanned exactly: a scope that
// truly holds fewer than k such vectors costs a scan. via names the
// search that answered.
func (a *annIndex) answer(g *graph, q []float32, k int, minSim float32) ([]cand, string) {
	if !g.linked {
		return g.search(q, k, k), memory.ViaScan
	}
	ef := max(a.cfg.efSearch, k)
	cs := g.search(q, k, ef)
	if clearing(cs, minSim) >= k {
		return cs, memory.ViaGraph
	}
	if cs = g.search(q, k, widen*ef); clearing(cs, minSim) >= k {
		a.stats.widened.Add(1)
		return cs, memory.ViaWider
	}
	a.stats.exact.Add(1)
	return g.exact(q, k), memory.ViaExact
}

// clearing counts the candidates scoring at least minSim (cs is best
// first). A candidate's dot product may differ from cosineUnit's score by
// float32 rounding; one within that of the cut-off counts.
func clearing(cs []cand, minSim float32) int {
	n := 0
	for n < len(cs) && cs[n].sim >= minSim-1e-6 {
		n++
	}
	return n
}

// catchUp loads scope s if it is not, then applies the log up to its head
// (at least h). The caller holds s.mu.
func (a *annIndex) catchUp(ctx context.Context, s *scopeIndex, h int64) error {
	if s.g != nil && s.seq >= h {
		return nil // another search caught up meanwhile
	}
	if s.g == nil {
		loadErr := a.load(ctx, s)
		if s.g == nil {
			if err := a.build(ctx, s); err != nil {
				return errors.Join(err, loadErr)
			}
			return nil
		}
	}
	if err := a.apply(ctx, s); err != nil {
		return err
	}
	if s.saveDue() {
		a.saveLater(s)
	}
	return nil
}

// saveDue: scope s's graph is linked and its file behind by enough changes
// to be worth rewriting (fewer are cheaper to catch up from the log). The
// caller holds s.mu.
func (s *scopeIndex) saveDue() bool {
	return s.g != nil && s.g.linked && s.unsaved.Load() >= 256+int64(s.g.live()/16)
}

// cosineUnit is the similarity of two unit vectors, summed in float64 as
// model.Cosine sums them, so that a score compared with the minimum
// similarity is the one an exact scan computes (to float32 rounding).
func cosineUnit(a, b []float32) float32 {
	var s float64
	for i, x := range a {
		s += float64(x) * float64(b[i])
	}
	return float32(max(-1, min(1, s)))
}
