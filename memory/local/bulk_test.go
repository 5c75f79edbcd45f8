package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
)

// bulkLoad writes new entries (no URI may exist yet) and, if vec is not
// nil, entry i's vector vec(i) from b's embedder, in transactions of
// 10,000 through prepared statements: put's fast path, for fixtures.
func bulkLoad(tb testing.TB, b *Backend, es []memory.Entry, vec func(i int) []float32) {
	tb.Helper()
	ctx := context.Background()
	next := map[string]int64{} // scope key -> its next rowid
	for lo := 0; lo < len(es); lo += 10_000 {
		if err := bulkBatch(ctx, b, es, lo, min(lo+10_000, len(es)), vec, next); err != nil {
			tb.Fatal(err)
		}
	}
}

func bulkBatch(ctx context.Context, b *Backend, es []memory.Entry, lo, hi int, vec func(int) []float32, next map[string]int64) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO entries(rowid, uri, scope, content, session, provenance, terms, length) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	var insVec *sql.Stmt
	if vec != nil {
		if insVec, err = tx.PrepareContext(ctx, `INSERT INTO vectors(rowid, model, vec) VALUES(?, ?, ?)`); err != nil {
			return err
		}
	}
	for i := lo; i < hi; i++ {
		e := es[i]
		key := e.URI.ScopeKey()
		rowid, ok := next[key]
		if !ok {
			id, err := scopeIDTx(ctx, tx, key)
			if err != nil {
				return err
			}
			if rowid, err = nextRowid(ctx, tx, id); err != nil {
				return err
			}
		}
		next[key] = rowid + 1
		prov, err := json.Marshal(e.Provenance)
		if err != nil {
			return err
		}
		terms, n := termsOf(e.Content)
		if _, err := ins.ExecContext(ctx, rowid, e.URI.String(), key, e.Content, string(e.Provenance.Session), string(prov), terms, n); err != nil {
			return err
		}
		if vec != nil {
			if _, err := insVec.ExecContext(ctx, rowid, rank.EmbedderKey(b.embedder), encodeVector(vec(i))); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
