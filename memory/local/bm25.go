package local

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync/atomic"

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
	id  int64   // its lexicon id
	idf float64 // ln(1 + (N - n + 0.5) / (n + 0.5)): positive however common
}

// bound is the most the term can add to any entry's score: a term's part
// tends to idf·(k1+1) as its occurrences grow and never reaches it.
func (t lexTerm) bound() float64 { return t.idf * (bm25K1 + 1) }

// lexQuery is a query read against the lexicon: its distinct terms that
// some entry holds, rarest first, and the average entry length.
type lexQuery struct {
	terms  []lexTerm
	avgLen float64
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
	args := make([]any, len(ts))
	for i, t := range ts {
		args[i] = t
	}
	rows, err := b.db.QueryContext(ctx, `SELECT l.id, l.docs, t.docs, t.tokens FROM lexicon l, lexicon_totals t
		WHERE l.term IN (?`+strings.Repeat(",?", len(ts)-1)+`) AND l.docs > 0`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	q := &lexQuery{}
	for rows.Next() {
		var t lexTerm
		var df, docs, tokens int64
		if err := rows.Scan(&t.id, &df, &docs, &tokens); err != nil {
			return nil, err
		}
		docs = max(docs, df)
		t.idf = math.Log(1 + (float64(docs-df)+0.5)/(float64(df)+0.5))
		q.avgLen = max(float64(tokens)/float64(docs), 1)
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
// postings in a scope's range, or a term looked up for the entries found
// already (see bm25Scope).
type lexStats struct {
	ranges, lookups atomic.Int64
}

// candidate is an entry being scored: its length and its score so far.
type candidate struct {
	length int64
	score  float64
}

// bm25Scope returns the k best entries of scope id by BM25, best first.
//
// The terms are read rarest first, each from its postings in the scope's
// rowid range, adding to the score of every entry that holds it. Before
// each term, if k entries already score more than the rest of the terms
// could add together (see lexTerm.bound), no entry that holds none of the
// terms read so far can reach the k best: the rest of the terms are then
// looked up for the entries already found only. A common word's long
// postings are thus never read when a rarer word decides the ranking, and
// the answer is the one reading every posting gives (prune false does
// that; a test compares them). Scores add the terms in the same order
// either way, so they are equal to the bit.
func (b *Backend) bm25Scope(ctx context.Context, q *lexQuery, id int64, k int, prune bool) ([]rank.Ranked, error) {
	lo, hi := scopeRange(id)
	rest := make([]float64, len(q.terms)+1) // rest[i]: the most terms i… can add
	for i := len(q.terms) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + q.terms[i].bound()
	}
	found := map[int64]*candidate{}
	for i, t := range q.terms {
		if prune && len(found) >= k && rest[i] <= kthScore(found, k) {
			for _, t := range q.terms[i:] {
				if err := b.addFound(ctx, q, t, found); err != nil {
					return nil, err
				}
			}
			break
		}
		if err := b.addRange(ctx, q, t, lo, hi, found); err != nil {
			return nil, err
		}
	}
	out := make([]rank.Ranked, 0, len(found))
	for rowid, c := range found {
		out = append(out, rank.Ranked{ID: rowid, Score: c.score})
	}
	rank.Sort(out)
	return out[:min(k, len(out))], nil
}

// addRange adds t's part to every entry of the rowid range that holds it.
func (b *Backend) addRange(ctx context.Context, q *lexQuery, t lexTerm, lo, hi int64, found map[int64]*candidate) error {
	b.lex.ranges.Add(1)
	rows, err := b.db.QueryContext(ctx, `SELECT entry, tf, length FROM postings WHERE term = ? AND entry BETWEEN ? AND ?`, t.id, lo, hi)
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
		}
		c.score += q.part(t, tf, c.length)
	}
	return rows.Err()
}

// addFound adds t's part to the entries of found that hold it.
func (b *Backend) addFound(ctx context.Context, q *lexQuery, t lexTerm, found map[int64]*candidate) error {
	b.lex.lookups.Add(1)
	ids := make([]int64, 0, len(found))
	for rowid := range found {
		ids = append(ids, rowid)
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rows, err := b.db.QueryContext(ctx, `SELECT p.entry, p.tf FROM json_each(?) j CROSS JOIN postings p
		ON p.term = ? AND p.entry = j.value`, string(raw), t.id)
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
