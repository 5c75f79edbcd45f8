package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/model"
)

// embed returns text's vector.
func (b *Backend) embed(ctx context.Context, text string) ([]float32, error) {
	out, err := b.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if len(out.Vectors) != 1 || len(out.Vectors[0]) == 0 {
		return nil, fmt.Errorf("embed: %d vectors for one text", len(out.Vectors))
	}
	return out.Vectors[0], nil
}

// literal quotes s as an SQL string literal (standard_conforming_strings,
// on since PostgreSQL 9.1).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// indexName is the HNSW index of one model's vectors of one dimension.
func indexName(model string, dim int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", model, dim))
	return "vectors_hnsw_" + hex.EncodeToString(sum[:6])
}

// ensureIndex creates, once per database, the partial HNSW index over the
// backend's model's vectors of dimension dim: an index needs a fixed
// dimension, and one table holds every model's. Without pgvector it does
// nothing.
func (b *Backend) ensureIndex(ctx context.Context, dim int) error {
	if !b.hnsw {
		return nil
	}
	m := rank.EmbedderKey(b.embedder)
	name := indexName(m, dim)
	b.mu.Lock()
	done := b.indexed[name]
	b.mu.Unlock()
	if done {
		return nil
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON rath_memory.vectors
			USING hnsw ((embedding::vector(%d)) vector_cosine_ops) WHERE model = %s`, name, dim, literal(m)))
		return err
	})
	if err != nil {
		return fmt.Errorf("create the HNSW index of %s: %w", m, err)
	}
	b.mu.Lock()
	b.indexed[name] = true
	b.mu.Unlock()
	return nil
}

// nearest returns up to k entries of the scopes whose vectors are most
// similar to q, at least minSim, best first.
func (b *Backend) nearest(ctx context.Context, q []float32, scopes []string, k int) ([]rank.Ranked, error) {
	if b.hnsw {
		return b.nearestHNSW(ctx, q, scopes, k)
	}
	rs, err := b.nearestExact(ctx, q, scopes, k)
	return via(rs, memory.ViaScan), err
}

// nearestHNSW asks the index. If fewer than k of the rows it returns
// score minSim (a graph search can start in the wrong region and stay
// there, and the recall would silently miss what is there), it asks again
// keeping efSearchWide candidates, and if that too returns fewer, scans
// exactly. Each row's Via names the search that answered.
func (b *Backend) nearestHNSW(ctx context.Context, q []float32, scopes []string, k int) ([]rank.Ranked, error) {
	if err := b.ensureIndex(ctx, len(q)); err != nil {
		return nil, err
	}
	out, err := b.askIndex(ctx, b.pool, q, scopes, k)
	if err != nil || len(out) >= k {
		return via(out, memory.ViaGraph), err
	}
	err = pgx.BeginTxFunc(ctx, b.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL hnsw.ef_search = %d`, efSearchWide)); err != nil {
			return err
		}
		out, err = b.askIndex(ctx, tx, q, scopes, k)
		return err
	})
	if err != nil || len(out) >= k {
		return via(out, memory.ViaWider), err
	}
	out, err = b.nearestExact(ctx, q, scopes, k)
	return via(out, memory.ViaExact), err
}

// efSearchWide is the fallback's hnsw.ef_search (pgvector's largest).
const efSearchWide = 1000

// askIndex returns the index's k nearest rows of the scopes scoring at
// least minSim, best first. The query repeats the index's expression and
// predicate literally, so the planner can use it whatever the plan cache
// does with parameters.
func (b *Backend) askIndex(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q []float32, scopes []string, k int) ([]rank.Ranked, error) {
	expr := fmt.Sprintf("embedding::vector(%d)", len(q))
	sql := fmt.Sprintf(`SELECT entry_id, 1 - (%s <=> $1) FROM rath_memory.vectors
		WHERE model = %s AND scope = ANY($2) ORDER BY %s <=> $1 LIMIT $3`, expr, literal(rank.EmbedderKey(b.embedder)), expr)
	rows, err := db.Query(ctx, sql, pgvector.NewVector(q), scopes, k)
	if err != nil {
		return nil, err
	}
	out, err := scanRanked(rows, float64(b.minSim))
	if err != nil {
		return nil, err
	}
	rank.Sort(out) // relaxed_order: the index may return near-ties out of order
	return out, nil
}

// via sets each row's Via.
func via(rs []rank.Ranked, how string) []rank.Ranked {
	for i := range rs {
		rs[i].Via = how
	}
	return rs
}

// nearestExact reads every vector of the scopes and keeps the k best.
func (b *Backend) nearestExact(ctx context.Context, q []float32, scopes []string, k int) ([]rank.Ranked, error) {
	rows, err := b.pool.Query(ctx, `SELECT entry_id, raw FROM rath_memory.vectors WHERE model = $1 AND scope = ANY($2)`,
		rank.EmbedderKey(b.embedder), scopes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	top := rank.NewTopK(k)
	var v []float32
	var raw []byte
	for rows.Next() {
		var r rank.Ranked
		if err := rows.Scan(&r.ID, &raw); err != nil {
			return nil, err
		}
		if v, err = decodeVector(raw, v); err != nil {
			return nil, fmt.Errorf("entry %d: %w", r.ID, err)
		}
		if len(v) != len(q) {
			continue // another dimension: not comparable
		}
		sim := model.Cosine(q, v)
		if sim < b.minSim || sim <= 0 {
			continue
		}
		r.Score = float64(sim)
		top.Offer(r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return top.Best(), nil
}
