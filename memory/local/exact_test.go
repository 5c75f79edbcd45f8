package local

import (
	"context"
	"fmt"

	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/model"
)

// exactNearest is nearest without the index: a scan of every vector of
// the scopes in the table, as recalls ranked before there was an index.
// Tests and benchmarks measure the index against it.
func (b *Backend) exactNearest(ctx context.Context, q []float32, ids []int64, k int) ([]rank.Ranked, error) {
	top := rank.NewTopK(k)
	for _, id := range ids {
		lo, hi := scopeRange(id)
		rows, err := b.db.QueryContext(ctx, `SELECT rowid, vec FROM vectors WHERE rowid BETWEEN ? AND ? AND model = ?`, lo, hi, rank.EmbedderKey(b.embedder))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var r rank.Ranked
			var blob []byte
			if err := rows.Scan(&r.ID, &blob); err != nil {
				rows.Close()
				return nil, err
			}
			v, err := decodeVector(blob)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("row %d: %w", r.ID, err)
			}
			sim := model.Cosine(q, v)
			if sim < b.minSim {
				continue
			}
			r.Score = float64(sim)
			top.Offer(r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return top.Best(), nil
}
