package local

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/memory/internal/text"
)

// zipfEntries writes n entries of Zipf-distributed words over three scopes
// (a few very common words, many rare ones, lengths from 3 to 30) and
// returns their contents by rowid.
func zipfEntries(t *testing.T, b *Backend, seed uint64, n int) map[int64]string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(rng, 1.2, 1, 999)
	m := memory.Over(b)
	for i := range n {
		words := make([]string, 3+rng.IntN(28))
		for j := range words {
			words[j] = fmt.Sprint("w", z.Uint64())
		}
		e := memory.Entry{URI: mustURI(t, fmt.Sprintf("memory://project/s%d/e%d", i%3, i)), Content: strings.Join(words, " ")}
		if _, err := m.Remember(context.Background(), nil, e); err != nil {
			t.Fatal(err)
		}
	}
	return contents(t, b)
}

// contents reads every entry's content by rowid.
func contents(t *testing.T, b *Backend) map[int64]string {
	t.Helper()
	rows, err := b.db.Query(`SELECT rowid, content FROM entries`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var c string
		if err := rows.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		out[id] = c
	}
	return out
}

// brute is the entries' term counts, computed from their contents alone.
type brute struct {
	tf     map[int64]map[string]int
	length map[int64]int
	df     map[string]int
	tokens int
}

func newBrute(all map[int64]string) *brute {
	br := &brute{tf: map[int64]map[string]int{}, length: map[int64]int{}, df: map[string]int{}}
	for id, c := range all {
		ts := text.Terms(c)
		br.tokens += len(ts)
		br.length[id] = len(ts)
		br.tf[id] = map[string]int{}
		for _, w := range ts {
			if br.tf[id][w] == 0 {
				br.df[w]++
			}
			br.tf[id][w]++
		}
	}
	return br
}

// bm25 scores every entry of the rowid range, adding the query's terms
// rarest first as the index does, and returns the k best.
func (br *brute) bm25(query string, lo, hi int64, k int) []rank.Ranked {
	tf, df := br.tf, br.df
	n, avg := float64(len(tf)), float64(br.tokens)/float64(len(tf))
	type term struct {
		w   string
		idf float64
	}
	var q []term
	for _, w := range slices.Compact(slices.Sorted(slices.Values(text.Terms(query)))) {
		if df[w] > 0 {
			q = append(q, term{w, math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))})
		}
	}
	slices.SortStableFunc(q, func(a, b term) int { return cmp.Compare(b.idf, a.idf) })
	var out []rank.Ranked
	for id, c := range tf {
		if id < lo || id > hi {
			continue
		}
		length, s, held := float64(br.length[id]), 0.0, false
		for _, t := range q {
			if f := float64(c[t.w]); f > 0 {
				s += t.idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*length/avg))
				held = true
			}
		}
		if held {
			out = append(out, rank.Ranked{ID: id, Score: s})
		}
	}
	rank.Sort(out)
	return out[:min(k, len(out))]
}

// sameRanking: the same rows in the same order, scores equal but for
// rounding (terms of equal rarity may be added in another order).
func sameRanking(got, want []rank.Ranked) bool {
	return slices.EqualFunc(got, want, func(a, b rank.Ranked) bool { return a.ID == b.ID && math.Abs(a.Score-b.Score) <= 1e-9 })
}

// TestBM25MatchesBruteForce: the index's ranking of each scope is the one
// computed from the entries' contents alone, and pruning changes nothing:
// the pruned search, as recalls run it and reading every common term by
// impact, returns the same rows with the same scores to the bit as reading
// every posting, while skipping common words' postings.
func TestBM25MatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBackend(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	br := newBrute(zipfEntries(t, b, 7, 900))
	ids := scopeIDsOf(t, b, "project/s0", "project/s1", "project/s2")
	rng := rand.New(rand.NewPCG(8, 9))
	queries := 400
	if raceDetector {
		queries = 200
	}
	for i := range queries {
		words := make([]string, 1+rng.IntN(4))
		for j := range words {
			words[j] = fmt.Sprint("w", []int{rng.IntN(5), rng.IntN(50), rng.IntN(1000)}[rng.IntN(3)])
		}
		query, k, id := strings.Join(words, " "), 1+rng.IntN(10), ids[i%len(ids)]
		if i%4 == 0 {
			k += 20 // as hybrid recalls ask
		}
		q, err := b.readQuery(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		full, err := b.bm25Scope(ctx, q, id, k, readEvery)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []readMode{readPruned, readByImpact} {
			pruned, err := b.bm25Scope(ctx, q, id, k, mode)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(full, pruned) {
				t.Fatalf("%q k=%d: mode %d %v, full %v", query, k, mode, pruned, full)
			}
		}
		lo, hi := scopeRange(id)
		want := br.bm25(query, lo, hi, k)
		if !sameRanking(full, want) {
			t.Fatalf("%q k=%d: %v, want %v", query, k, full, want)
		}
	}
	if b.lex.lookups.Load() == 0 || b.lex.impacts.Load() == 0 {
		t.Fatalf("no search was pruned (%d lookups, %d reads by impact): every common word's postings were read",
			b.lex.lookups.Load(), b.lex.impacts.Load())
	}
}

// TestLexiconFollowsWrites: after entries are added, replaced and forgotten
// through two handles, the lexicon's counts, the postings and the totals
// are what the entries' contents give.
func TestLexiconFollowsWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	a, err := OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	other, err := OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	zipfEntries(t, a, 11, 300)
	mo := memory.Over(other)
	for i := 0; i < 300; i += 7 { // replaced by the other handle
		e := memory.Entry{URI: mustURI(t, fmt.Sprintf("memory://project/s%d/e%d", i%3, i)), Content: fmt.Sprintf("Replaced w%d Café w1 w1", i)}
		if _, err := mo.Remember(ctx, nil, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Delete(ctx, memory.Selector{Prefix: "memory://project/s1/"}); err != nil {
		t.Fatal(err)
	}
	checkLexicon(t, a)
}

// checkLexicon compares the lexical index with what the contents give.
func checkLexicon(t *testing.T, b *Backend) {
	t.Helper()
	all := contents(t, b)
	wantDF, wantTokens := map[string]int{}, 0
	wantPostings := 0
	for _, c := range all {
		seen := map[string]bool{}
		for _, w := range text.Terms(c) {
			wantTokens++
			if !seen[w] {
				seen[w] = true
				wantDF[w]++
				wantPostings++
			}
		}
	}
	gotDF := map[string]int{}
	rows, err := b.db.Query(`SELECT term, docs FROM lexicon`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		var n int
		if err := rows.Scan(&w, &n); err != nil {
			t.Fatal(err)
		}
		gotDF[w] = n
	}
	rows.Close()
	if len(gotDF) != len(wantDF) {
		t.Fatalf("lexicon holds %d terms, the contents %d", len(gotDF), len(wantDF))
	}
	for w, n := range wantDF {
		if gotDF[w] != n {
			t.Fatalf("term %q: %d entries in the lexicon, %d in the contents", w, gotDF[w], n)
		}
	}
	var docs, tokens, postings, stale, totals int
	if err := b.db.QueryRow(`SELECT docs, tokens, (SELECT count(*) FROM postings),
		(SELECT count(*) FROM postings p JOIN entries e ON e.rowid = p.entry WHERE p.length != e.length),
		(SELECT count(*) FROM lexicon_totals)
		FROM lexicon_totals`).Scan(&docs, &tokens, &postings, &stale, &totals); err != nil {
		t.Fatal(err)
	}
	if totals != 1 {
		t.Fatalf("lexicon_totals holds %d rows", totals)
	}
	if docs != len(all) || tokens != wantTokens || postings != wantPostings || stale != 0 {
		t.Fatalf("totals %d entries %d terms, %d postings (%d of stale length); want %d, %d, %d",
			docs, tokens, postings, stale, len(all), wantTokens, wantPostings)
	}
}
