package local

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openrath/rath/memory/internal/rank"
)

// The hard recall sets of issue 38: 384 dimensions, as the benchmark's,
// but shaped so that a graph search can go wrong. Queries are drawn from
// the same distribution (c.query), never copies of stored vectors.
//
//   - overlapping: 64 centres, each vector its centre plus isotropic noise
//     as large as the centres' own spread, so clusters overlap and a
//     query's true neighbours (similarity about 0.6) may sit across a
//     cluster boundary from where a greedy descent lands.
//   - lowRank: one 32-dimension subspace (no centre) plus isotropic noise
//     of a third of its scale, the way sentence embeddings concentrate on
//     a few directions: no clusters to route by, only a continuum.
func overlappingSet(seed uint64) *clustered { return newClustered(seed, benchDims, 64, 0, 0, 1) }

func lowRankSet(seed uint64) *clustered {
	c := newClustered(seed, benchDims, 1, 32, 1, 0.33)
	clear(c.centres[0])
	return c
}

// hardSets are the generators the hard recall test and benchmark use.
var hardSets = []struct {
	name string
	gen  func(seed uint64) *clustered
}{{"overlapping", overlappingSet}, {"lowrank", lowRankSet}}

// unitVectors is vectors 0..n-1 of c as unit vectors.
func unitVectors(c *clustered, n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = unit(c.vector(uint64(i)))
	}
	return out
}

// exactTop is the k best of vs for unit vector q scoring at least minSim,
// as indexes into vs, best first: the truth a recall is measured against.
func exactTop(vs [][]float32, q []float32, k int, minSim float32) []rank.Ranked {
	top := rank.NewTopK(k)
	for i, v := range vs {
		if s := cosineUnit(q, v); s >= minSim {
			top.Offer(rank.Ranked{ID: int64(i), Score: float64(s)})
		}
	}
	return top.Best()
}

// recallOf measures a backend holding vectors 0..n-1 of c in scope
// "project/<scope>" (entry i at rowid base+i) on queries 0..queries-1:
// recall@10 against the exact top ten over all queries, and the queries
// that found none of theirs.
func recallOf(tb testing.TB, b *Backend, c *clustered, vs [][]float32, scope string, queries int) (float64, []int) {
	tb.Helper()
	ctx := context.Background()
	ids, err := b.scopeIDs(ctx, []string{"project/" + scope})
	if err != nil || len(ids) != 1 {
		tb.Fatalf("scope %s: %v %v", scope, ids, err)
	}
	index := rowIndexes(tb, b, scope)
	found, total := 0, 0
	var lost []int
	for q := range queries {
		qv := c.query(uint64(q))
		want := exactTop(vs, unit(qv), 10, b.minSim)
		got, err := b.nearest(ctx, qv, ids, 10)
		if err != nil {
			tb.Fatal(err)
		}
		hit := 0
		for _, r := range got {
			if slices.ContainsFunc(want, func(w rank.Ranked) bool { return w.ID == index[r.ID] }) {
				hit++
			}
		}
		if hit == 0 && len(want) > 0 {
			lost = append(lost, q)
		}
		found += hit
		total += len(want)
	}
	if total == 0 {
		tb.Fatal("no query has an exact neighbour above the cut-off")
	}
	return float64(found) / float64(total), lost
}

// loadHard opens a backend at dir over set c with n vectors in scope
// project/h, its graph built (by a first recall).
func loadHard(tb testing.TB, dir string, c *clustered, n int, opts ...Option) *Backend {
	tb.Helper()
	b, err := OpenBackend(context.Background(), filepath.Join(dir, "m.db"), append([]Option{WithEmbedder(newSynth(c))}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	loadVectors(tb, b, c, "h", 0, n)
	ids, err := b.scopeIDs(context.Background(), []string{"project/h"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := b.nearest(context.Background(), c.query(1<<20), ids, 10); err != nil {
		tb.Fatal(err)
	}
	if !b.ann.scope(ids[0]).g.linked {
		tb.Fatalf("%d vectors are scanned, not searched through a graph", n)
	}
	return b
}

// rowIndexes maps each rowid of scope project/<scope> to its entry's
// number (entry "e<i>").
func rowIndexes(tb testing.TB, b *Backend, scope string) map[int64]int64 {
	tb.Helper()
	rows, err := b.db.Query(`SELECT rowid, uri FROM entries WHERE scope = ?`, "project/"+scope)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var rowid, i int64
		var uri string
		if err := rows.Scan(&rowid, &uri); err != nil {
			tb.Fatal(err)
		}
		if _, err := fmt.Sscanf(uri, "memory://project/"+scope+"/e%d", &i); err != nil {
			tb.Fatal(uri, err)
		}
		out[rowid] = i
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
