package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/memory"
)

// corpus makes n entries of 20 words drawn from a 5,000-word vocabulary
// (Zipf-distributed, as words are).
func corpus(n int) []memory.Entry {
	rng := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(rng, 1.1, 1, 4999)
	out := make([]memory.Entry, n)
	for i := range out {
		var b strings.Builder
		for w := range 20 {
			if w > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", z.Uint64())
		}
		out[i] = memory.Entry{URI: memory.URI{Scope: memory.ScopeProject, ScopeID: fmt.Sprint("p", i%10), Path: fmt.Sprint("e", i)}, Content: b.String()}
	}
	return out
}

func fill(b *testing.B, be *Backend, es []memory.Entry) {
	b.Helper()
	ctx := context.Background()
	tx, err := be.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range es {
		if _, err := put(ctx, tx, e); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRecall: two-word queries over 100,000 entries in ten scopes,
// searching three of them; reports the median and 99th percentile latency.
func BenchmarkRecall(b *testing.B) {
	b.Run("entries=100000", func(b *testing.B) {
		be, err := OpenBackend(context.Background(), filepath.Join(b.TempDir(), "m.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		fill(b, be, corpus(100_000))
		m := memory.Over(be)
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
	})
}

// BenchmarkRemember: one durable (fsync'd) write of a 20-word entry.
func BenchmarkRemember(b *testing.B) {
	m, err := Open(context.Background(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	es := corpus(1000)
	i := 0
	for b.Loop() {
		e := es[i%len(es)]
		e.URI.Path = fmt.Sprint("r", i)
		i++
		if _, err := m.Remember(context.Background(), nil, e); err != nil {
			b.Fatal(err)
		}
	}
}
