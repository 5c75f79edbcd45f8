package local

import (
	"fmt"
	"testing"
)

// BenchmarkScanOrGraph: where a graph search (efSearch default, k 20, as
// a hybrid recall asks) becomes faster than the exact scan of a scope,
// on the low-rank hard set at 384 dimensions: the exact-scan threshold
// (defaultANN's minGraph) should sit about there.
func BenchmarkScanOrGraph(b *testing.B) {
	c := lowRankSet(38)
	const k = 20
	for _, n := range []int{2048, 4096, 8192, 16384} {
		g := newGraph(benchDims, defaultANN().m, defaultANN().efBuild)
		for i, v := range unitVectors(c, n) {
			g.add(int64(i), v)
		}
		g.linkAll()
		qs := make([][]float32, 64)
		for i := range qs {
			qs[i] = unit(c.query(uint64(i)))
		}
		b.Run(fmt.Sprintf("vectors=%d/scan", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				g.exact(qs[i%len(qs)], k)
				i++
			}
		})
		b.Run(fmt.Sprintf("vectors=%d/graph", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				g.search(qs[i%len(qs)], k, defaultANN().efSearch)
				i++
			}
		})
	}
}
