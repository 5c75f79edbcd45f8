package local

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync/atomic"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/memory/internal/text"
)

// BM25's parameters: how fast repeats of a term stop adding to an entry's
// score, and how much an entry's length discounts it.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// lexTerm is a query term that some entry holds.
type lexTerm struct {
	id   int64   // its lexicon id
	docs int64   // how many entries hold it, in every scope
	idf  float64 // ln(1 + (N - n + 0.5) / (n + 0.5)): positive however common
}

// bound is the most the term can add to any entry's score: a term's part
// tends to idf·(k1+1) as its occurrences grow and never reaches it.
func (t lexTerm) bound() float64 { return t.idf * (bm25K1 + 1) }

// lexQuery is a query read against the lexicon: its distinct terms that
// some entry holds, rarest first, the number of entries and their average
// length.
type lexQuery struct {
	terms   []lexTerm
	entries int64
	avgLen  float64
}

// part is what an occurrence count tf in an entry of length n adds.
func (q *lexQuery) part(t lexTerm, tf, n int64) float64 {
	f := float64(tf)
	return t.idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(n)/q.avgLen))
}

// readQuery looks the query's terms up; a query with none that any entry
// holds has no terms.
func (b *Backend) readQuery(ctx context.Context, query string) (*lexQuery, error) {
	ts := rank.Dedupe(text.Terms(query))
	if len(ts) == 0 {
		return &lexQuery{}, nil
	}
	raw, err := json.Marshal(ts)
	if err != nil {
		return nil, err
	}
	rows, err := b.stmts.terms.QueryContext(ctx, string(raw))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	q := &lexQuery{}
	for rows.Next() {
		var t lexTerm
		var docs, tokens int64
		if err := rows.Scan(&t.id, &t.docs, &docs, &tokens); err != nil {
			return nil, err
		}
		df := t.docs
		docs = max(docs, df)
		t.idf = math.Log(1 + (float64(docs-df)+0.5)/(float64(df)+0.5))
		q.entries, q.avgLen = docs, max(float64(tokens)/float64(docs), 1)
		q.terms = append(q.terms, t)
	}
	slices.SortFunc(q.terms, func(a, b lexTerm) int {
		if c := cmp.Compare(b.idf, a.idf); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return q, rows.Err()
}

// lexStats counts how the lexical searches read the postings: a term's
// postings in a scope's range, a term looked up for the entries found
// already, or a term's postings read by impact (see bm25Scope).
type lexStats struct {
	ranges, lookups, impacts atomic.Int64
}

// candidate is an entry being scored: its length and its score so far.
type candidate struct {
	length int64
	score  float64
}

// readMode is how bm25Scope reads the postings.
type readMode int

const (
	readEvery    readMode = iota // every posting of every term: what the others must equal
	readPruned                   // what recalls do
	readByImpact                 // readPruned, reading by impact wherever it may (tests)
)

// bm25Scope returns the k best entries of scope id by BM25, best first.
//
// The terms are read rarest first, each adding its part to the score of
// the entries that hold it. Before each term, if k entries already score
// more than the rest of the terms could add together (see lexTerm.bound),
// no entry that holds none of the terms read so far can reach the k best:
// the rest of the terms are then looked up for the entries already found
// only. Otherwise a rare term's postings in the scope's rowid range are
// read whole, and a common term's by impact (addImpact): the entries found
// are looked up, and of the others only those its part alone could bring
// to the k best are read. A common word's long postings are thus never
// read whole when rarer words, or its own best postings, decide the
// ranking.
//
// The answer is the one reading every posting gives (readEvery; a test
// compares them): an entry left out, or found without some term's part,
// is one whose whole score is below a score that k entries already have.
// Scores add the terms in the same order either way, so those of the k
// best are equal to the bit.
func (b *Backend) bm25Scope(ctx context.Context, q *lexQuery, id int64, k int, mode readMode) ([]rank.Ranked, error) {
	lo, hi := scopeRange(id)
	rest := make([]float64, len(q.terms)+1) // rest[i]: the most terms i… can add
	for i := len(q.terms) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + q.terms[i].bound()
	}
	found := map[int64]*candidate{}
	share := -1.0 // the scope's share of the entries, once needed
	for i, t := range q.terms {
		if mode != readEvery && len(found) >= k && rest[i] <= kthScore(found, k) {
			for j, t := range q.terms[i:] {
				if err := b.addFound(ctx, q, t, found, hopeless(found, k, rest[i+j])); err != nil {
					return nil, err
				}
			}
			break
		}
		// With fewer than k found and terms after t that could add as
		// much as t, the k-th best score, which t's postings would set,
		// is below what they could add to any entry: addImpact would read
		// every posting.
		impact := mode != readEvery && (len(found) >= k || rest[i+1] < t.bound())
		if impact && mode == readPruned {
			if share < 0 {
				var err error
				if share, err = b.scopeShare(ctx, q, id); err != nil {
					return nil, err
				}
			}
			impact = byImpact(t, share, k, len(found))
		}
		var err error
		if impact {
			err = b.addImpact(ctx, q, t, id, k, rest[i], rest[i+1], found)
		} else {
			err = b.addRange(ctx, q, t, lo, hi, found, false)
		}
		if err != nil {
			return nil, err
		}
	}
	return best(found, k), nil
}

// best is the k best of found, best first.
func best(found map[int64]*candidate, k int) []rank.Ranked {
	out := make([]rank.Ranked, 0, len(found))
	for rowid, c := range found {
		out = append(out, rank.Ranked{ID: rowid, Score: c.score, Via: memory.ViaLexical})
	}
	rank.Sort(out)
	return out[:min(k, len(out))]
}

// addRange adds t's part to every entry of the rowid range that holds it
// (with onlyNew, to those not in found yet only).
func (b *Backend) addRange(ctx context.Context, q *lexQuery, t lexTerm, lo, hi int64, found map[int64]*candidate, onlyNew bool) error {
	b.lex.ranges.Add(1)
	rows, err := b.stmts.rng.QueryContext(ctx, t.id, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rowid, tf, n int64
		if err := rows.Scan(&rowid, &tf, &n); err != nil {
			return err
		}
		c := found[rowid]
		if c == nil {
			c = &candidate{length: n}
			found[rowid] = c
		} else if onlyNew {
			continue
		}
		c.score += q.part(t, tf, c.length)
	}
	return rows.Err()
}

// addFound adds t's part to the entries of found that hold it, but for
// those scoring less than floor, which no term can bring to the k best
// (see hopeless).
func (b *Backend) addFound(ctx context.Context, q *lexQuery, t lexTerm, found map[int64]*candidate, floor float64) error {
	ids := make([]int64, 0, len(found))
	for rowid, c := range found {
		if c.score >= floor {
			ids = append(ids, rowid)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	b.lex.lookups.Add(1)
	raw, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rows, err := b.stmts.lookup.QueryContext(ctx, string(raw), t.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rowid, tf int64
		if err := rows.Scan(&rowid, &tf); err != nil {
			return err
		}
		if c := found[rowid]; c != nil {
			c.score += q.part(t, tf, c.length)
		}
	}
	return rows.Err()
}

// kthScore is the k-th best score of found (which holds at least k).
func kthScore(found map[int64]*candidate, k int) float64 {
	s := make([]float64, 0, len(found))
	for _, c := range found {
		s = append(s, c.score)
	}
	slices.Sort(s)
	return s[len(s)-k]
}
