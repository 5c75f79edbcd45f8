package postgres

import (
	"context"
	"math"
	"time"
)

// idfStats are the document frequencies of the most common lexemes, as
// ANALYZE (or autovacuum) last sampled the tsvector column: PostgreSQL
// keeps them in pg_stats for the planner. A lexeme not among them is rarer
// than the least common that is.
type idfStats struct {
	freq    map[string]float64
	min     float64 // frequency of a lexeme not in freq
	fetched time.Time
}

// statsTTL is how long statistics are used before they are read again.
const statsTTL = 30 * time.Second

// idf returns the inverse document frequency weight of each lexeme,
// ln(1 + (1-f)/f) as bm25 has it, from statistics at most statsTTL old.
// Without statistics (a new memory, never analysed) every lexeme weighs 1.
func (b *Backend) idf(ctx context.Context, lexemes []string) ([]float64, error) {
	b.mu.Lock()
	st := b.stats
	b.mu.Unlock()
	if time.Since(st.fetched) > statsTTL {
		fresh, err := b.readStats(ctx)
		if err != nil {
			return nil, err
		}
		b.mu.Lock()
		b.stats, st = fresh, fresh
		b.mu.Unlock()
	}
	out := make([]float64, len(lexemes))
	for i, l := range lexemes {
		if st.freq == nil {
			out[i] = 1
			continue
		}
		f, ok := st.freq[l]
		if !ok {
			f = st.min
		}
		f = min(max(f, 1e-6), 1)
		out[i] = math.Log(1 + (1-f+1e-6)/f)
	}
	return out, nil
}

// readStats reads the tsvector column's element statistics.
func (b *Backend) readStats(ctx context.Context) (idfStats, error) {
	st := idfStats{fetched: time.Now()}
	var elems []string
	var freqs []float32
	err := b.pool.QueryRow(ctx, `SELECT coalesce(most_common_elems::text::text[], '{}'), coalesce(most_common_elem_freqs, '{}')
		FROM pg_stats WHERE schemaname = 'rath_memory' AND tablename = 'entries' AND attname = 'tsv'`).Scan(&elems, &freqs)
	if err != nil || len(elems) == 0 || len(freqs) < len(elems)+2 {
		return st, nil // no statistics yet: equal weights
	}
	st.freq = make(map[string]float64, len(elems))
	for i, e := range elems {
		st.freq[e] = float64(freqs[i])
	}
	// After the elements' frequencies come their minimum and maximum; a
	// lexeme below the minimum was not kept, so it is rarer still.
	st.min = float64(freqs[len(elems)]) / 2
	return st, nil
}
