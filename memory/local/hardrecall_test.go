//go:build !race

package local

import "testing"

// TestHardRecall: on the hard sets (see overlappingSet, lowRankSet), 20,000
// vectors in one scope, searched through its graph with the default
// configuration, 200 queries drawn from the distribution find at least
// 98% of the exact top ten above the similarity cut-off, and no query
// finds none of its own (the silent miss). Not under the race detector:
// building a graph of 20,000 384-dimension vectors there takes minutes.
func TestHardRecall(t *testing.T) {
	const n, queries = 20_000, 200
	for _, set := range hardSets {
		t.Run(set.name, func(t *testing.T) {
			c := set.gen(38)
			b := loadHard(t, t.TempDir(), c, n)
			defer b.Close()
			recall, lost := recallOf(t, b, c, unitVectors(c, n), "h", queries)
			t.Logf("recall@10 = %.4f; queries with none of their top ten: %v", recall, lost)
			if recall < 0.98 || len(lost) > 0 {
				t.Errorf("recall@10 = %.4f, %d queries found none of their top ten (%v); want at least 0.98 and none", recall, len(lost), lost)
			}
		})
	}
}
