package local

import (
	"context"
	"math"
)

// Reading a common term's postings by impact. A term's part of a score
// grows with its occurrences and falls as the entry's length grows (see
// lexQuery.part), and no posting with fewer occurrences than tf can add
// more than part(tf, 0). postings_impact orders the postings of a term
// that an entry holds more than once by scope, occurrences (most first)
// and length (shortest first): within one count of occurrences, the order
// of the part. So the postings whose part is at least some floor are a
// prefix of each count's run, and the runs worth reading end at the first
// count whose part(tf, 0) is below the floor. The postings of a term held
// once (most of a rare word's, fewer of a common word's) are not indexed,
// which keeps the index small and cheap to write; those worth reading are
// found in the term's range by their length.

// addImpact adds t, the i-th of q's terms, to the search of scope id for
// the k best entries, where rest[i] is restHere and rest[i+1] restAfter
// (see bm25Scope), without reading every posting of t's:
//
//  1. t is looked up for the entries found already that could still reach
//     the k best (see hopeless);
//  2. if fewer than k entries are found, k of t's postings, those it holds
//     most often first, are taken as they are;
//  3. of the other entries that hold t, those whose part of t, with the
//     most the terms after it can add, could reach the k-th best score of
//     those found are read. The others are left out: their whole score is
//     below a score that k entries have already.
func (b *Backend) addImpact(ctx context.Context, q *lexQuery, t lexTerm, id int64, k int, restHere, restAfter float64, found map[int64]*candidate) error {
	b.lex.impacts.Add(1)
	if len(found) > 0 {
		if err := b.addFound(ctx, q, t, found, hopeless(found, k, restHere)); err != nil {
			return err
		}
	}
	if len(found) < k {
		// The rows are distinct entries, so at least k are new unless
		// they are all of t's in the scope.
		if all, err := b.seed(ctx, q, t, id, k+len(found), found); err != nil || all {
			return err
		}
	}
	floor := below(kthScore(found, k), restAfter)
	if floor <= 0 { // any entry may reach the k best
		lo, hi := scopeRange(id)
		return b.addRange(ctx, q, t, lo, hi, found, true)
	}
	for top := int64(math.MaxInt64); top > 1; {
		var err error
		if _, top, err = b.readRepeated(ctx, q, t, id, top, floor, -1, found); err != nil {
			return err
		}
	}
	if q.part(t, 1, 0) < floor {
		return nil
	}
	_, err := b.readOnce(ctx, q, t, id, floor, -1, found)
	return err
}

// seed adds t's part to the entries of up to n postings of t's in scope
// id, those of entries not in found yet, and reports whether those were
// all of t's postings there.
func (b *Backend) seed(ctx context.Context, q *lexQuery, t lexTerm, id int64, n int, found map[int64]*candidate) (all bool, err error) {
	read, _, err := b.readRepeated(ctx, q, t, id, math.MaxInt64, math.Inf(-1), n, found)
	if err != nil || read == n {
		return false, err
	}
	once, err := b.readOnce(ctx, q, t, id, math.Inf(-1), n-read, found)
	return once < n-read, err
}

// readRepeated reads, by impact, the postings of t's in scope id of
// entries that hold it more than once and at most top times, up to limit
// of them (-1: no limit), adding t's part to the entries not in found yet
// whose part is at least floor. It returns how many it read, and next:
// after a posting below floor, the count of occurrences to go on from (the
// rest of its count's are no better); else 0.
func (b *Backend) readRepeated(ctx context.Context, q *lexQuery, t lexTerm, id, top int64, floor float64, limit int, found map[int64]*candidate) (read int, next int64, err error) {
	rows, err := b.stmts.impact.QueryContext(ctx, t.id, id, top)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for read != limit && rows.Next() {
		read++
		var rowid, tf, n int64
		if err := rows.Scan(&rowid, &tf, &n); err != nil {
			return read, 0, err
		}
		if q.part(t, tf, 0) < floor { // nor any posting with fewer occurrences
			return read, 0, rows.Err()
		}
		p := q.part(t, tf, n)
		if p < floor {
			return read, tf - 1, rows.Err()
		}
		if found[rowid] == nil {
			found[rowid] = &candidate{length: n, score: p}
		}
	}
	return read, 0, rows.Err()
}

// readOnce reads the postings of t's in scope id of entries that hold it
// once, up to limit of them (-1: no limit), adding t's part to the entries
// not in found yet whose part is at least floor; SQLite passes over those
// too long for their part to reach it. It returns how many it read.
func (b *Backend) readOnce(ctx context.Context, q *lexQuery, t lexTerm, id int64, floor float64, limit int, found map[int64]*candidate) (read int, err error) {
	lo, hi := scopeRange(id)
	rows, err := b.stmts.once.QueryContext(ctx, t.id, lo, hi, longest(q, t, floor))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for read != limit && rows.Next() {
		read++
		var rowid, n int64
		if err := rows.Scan(&rowid, &n); err != nil {
			return read, err
		}
		if p := q.part(t, 1, n); p >= floor && found[rowid] == nil {
			found[rowid] = &candidate{length: n, score: p}
		}
	}
	return read, rows.Err()
}

// longest is a length beyond which an entry holding t once has a part of
// t below floor: part(1, n) >= floor where 1 + k1·(1-b+b·n/avgLen) <=
// idf·(k1+1)/floor, plus a margin (the part is compared again exactly).
func longest(q *lexQuery, t lexTerm, floor float64) int64 {
	if floor <= 0 {
		return math.MaxInt64
	}
	n := (t.idf*(bm25K1+1)/floor - 1 - bm25K1*(1-bm25B)) * q.avgLen / (bm25K1 * bm25B)
	if !(n < 1<<62) { // or NaN
		return math.MaxInt64
	}
	return int64(max(n, 0)*(1+1e-9)) + 1
}

// hopeless is the score below which an entry of found cannot reach the k
// best however much the terms left (which add at most rest) add to it:
// k entries score at least the k-th best score already (scores only grow).
// With fewer than k found, no score is.
func hopeless(found map[int64]*candidate, k int, rest float64) float64 {
	if len(found) < k {
		return math.Inf(-1)
	}
	return below(kthScore(found, k), rest)
}

// below is kth - rest, less a margin far above the rounding of the sums
// that compare with it (a score adds its terms' parts one by one; rest
// adds their bounds), so that an entry it leaves out is below kth however
// the sums round.
func below(kth, rest float64) float64 {
	return kth - rest - 1e-9*(kth+rest)
}
