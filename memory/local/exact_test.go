package local

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/openrath/rath/model"
)

// exactNearest is nearest without the index: a scan of every vector of
// the scopes in the table, as recalls ranked before there was an index.
// Tests and benchmarks measure the index against it.
func (b *Backend) exactNearest(ctx context.Context, q []float32, ids []int64, k int) ([]ranked, error) {
	h := &minHeap{}
	for _, id := range ids {
		lo, hi := scopeRange(id)
		rows, err := b.db.QueryContext(ctx, `SELECT rowid, vec FROM vectors WHERE rowid BETWEEN ? AND ? AND model = ?`, lo, hi, embedderKey(b.embedder))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var r ranked
			var blob []byte
			if err := rows.Scan(&r.rowid, &blob); err != nil {
				rows.Close()
				return nil, err
			}
			v, err := decodeVector(blob)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("row %d: %w", r.rowid, err)
			}
			sim := model.Cosine(q, v)
			if sim < b.minSim {
				continue
			}
			r.score = float64(sim)
			if h.Len() < k {
				heap.Push(h, r)
			} else if r.score > (*h)[0].score {
				(*h)[0] = r
				heap.Fix(h, 0)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]ranked, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(ranked)
	}
	return out, nil
}

type minHeap []ranked

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(ranked)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
