package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
)

// benchHard measures one scope of n vectors of hard set c (see
// hard_test.go) on 200 queries from the distribution: recall@10 of the
// graph search alone at efSearch 64, 128 and 256 (and how many queries
// found none of their top ten), recall@10 of nearest with the default
// configuration and its fallback (and how often it fell back), the
// latency of nearest and of an exact scan of the scope.
func benchHard(b *testing.B, c *clustered, n int) {
	ctx := context.Background()
	t0 := time.Now()
	be := loadHard(b, b.TempDir(), c, n)
	defer be.Close()
	b.Logf("%d vectors loaded and linked in %s", n, time.Since(t0).Round(time.Second))
	vs := unitVectors(c, n)
	ids, err := be.scopeIDs(ctx, []string{"project/h"})
	if err != nil {
		b.Fatal(err)
	}
	g := be.ann.scope(ids[0]).g
	index := rowIndexes(b, be, "h")
	const queries = 200
	type metric struct {
		v    float64
		unit string
	}
	var ms []metric // reported after b.Loop, which clears what was reported before it
	report := func(v float64, unit string) { ms = append(ms, metric{v, unit}) }
	truth := make([][]rank.Ranked, queries)
	for q := range truth {
		truth[q] = exactTop(vs, unit(c.query(uint64(q))), 10, be.minSim)
	}
	for _, ef := range []int{64, 128, 256} {
		found, total, lost := 0, 0, 0
		for q, want := range truth {
			qv := unit(c.query(uint64(q)))
			hit := 0
			for _, x := range g.search(qv, 10, ef) {
				if x.sim >= be.minSim && slices.ContainsFunc(want, func(w rank.Ranked) bool { return w.ID == index[g.keys[x.id]] }) {
					hit++
				}
			}
			if hit == 0 && len(want) > 0 {
				lost++
			}
			found, total = found+hit, total+len(want)
		}
		report(float64(found)/float64(total), fmt.Sprintf("graph-recall@10-ef%d", ef))
		report(float64(lost), fmt.Sprintf("graph-lost-ef%d", ef))
	}
	recall, lost := recallOf(b, be, c, vs, "h", queries)
	report(recall, "recall@10")
	report(float64(len(lost)), "lost")
	report(float64(be.ann.stats.widened.Load()), "fallback-wider")
	report(float64(be.ann.stats.exact.Load()), "fallback-exact")

	var scan []time.Duration
	for q := range 50 {
		qv := unit(c.query(uint64(1000 + q)))
		t0 := time.Now()
		g.exact(qv, 10)
		scan = append(scan, time.Since(t0))
	}
	slices.Sort(scan)
	report(float64(scan[len(scan)/2].Microseconds())/1e3, "exact-p50-ms")

	rng := rand.New(rand.NewPCG(3, 4))
	var lat []time.Duration
	for b.Loop() {
		qv := c.query(uint64(2000 + rng.IntN(1<<30)))
		t0 := time.Now()
		if _, err := be.nearest(ctx, qv, ids, 10); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	for _, m := range ms {
		b.ReportMetric(m.v, m.unit)
	}
}

// BenchmarkRecallDuringRebuild: a scope of n 384-dimension vectors (the
// recall benchmark's distribution), linked, then 44% of its entries
// deleted; the next recall starts the graph's rebuild. Reports that
// recall's latency (trigger-ms), the latency of the vector recalls made
// while the rebuild runs (p50-ms, p99-ms, and how many), and how long the
// rebuild took (rebuild-s). Run with -benchtime=1x: one iteration is one
// rebuild.
func BenchmarkRecallDuringRebuild(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprintf("backend=local/entries=%d", n), func(b *testing.B) {
			for b.Loop() {
				benchRebuild(b, n)
			}
		})
	}
}

func benchRebuild(b *testing.B, n int) {
	ctx := context.Background()
	c := benchVectors()
	be := loadHard(b, b.TempDir(), c, n)
	defer be.Close()
	ids, err := be.scopeIDs(ctx, []string{"project/h"})
	if err != nil {
		b.Fatal(err)
	}
	s := be.ann.scope(ids[0])
	for _, p := range []string{"e1", "e2", "e3", "e4"} {
		if _, err := be.Delete(ctx, memory.Selector{Prefix: "memory://project/h/" + p}); err != nil {
			b.Fatal(err)
		}
	}
	recall := func(i int) time.Duration {
		t0 := time.Now()
		if _, err := be.nearest(ctx, c.query(uint64(i)), ids, 10); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	t0 := time.Now()
	b.ReportMetric(float64(recall(0).Microseconds())/1e3, "trigger-ms")
	var lat []time.Duration
	for i := 1; s.rebuilding.Load(); i++ {
		lat = append(lat, recall(i))
	}
	b.ReportMetric(time.Since(t0).Seconds(), "rebuild-s")
	b.ReportMetric(float64(len(lat)), "recalls-during")
	if be.ann.stats.rebuilt.Load() != 1 {
		b.Fatalf("%d rebuilds swapped in, want 1", be.ann.stats.rebuilt.Load())
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	}
}
