package local

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
)

// scopeIDs returns the ids of the scope keys that have any entry.
func (b *Backend) scopeIDs(ctx context.Context, keys []string) ([]int64, error) {
	b.mu.Lock()
	ids := make([]int64, 0, len(keys))
	var missing []any
	for _, k := range keys {
		if id, ok := b.scopes[k]; ok {
			ids = append(ids, id)
		} else {
			missing = append(missing, k)
		}
	}
	b.mu.Unlock()
	if len(missing) == 0 {
		return ids, nil
	}
	rows, err := b.db.QueryContext(ctx, `SELECT id, key FROM scopes WHERE key IN (?`+strings.Repeat(",?", len(missing)-1)+`)`, missing...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var k string
		if err := rows.Scan(&id, &k); err != nil {
			return nil, err
		}
		ids = append(ids, id)
		b.mu.Lock()
		b.scopes[k] = id
		b.mu.Unlock()
	}
	return ids, rows.Err()
}

// Search implements memory.Backend: BM25 ranking of the content, best
// first, higher is better. Each scope is searched within its rowid range
// and the per-scope lists are merged; an entry that holds no query term
// is not a hit. With an embedder, the bm25 list
// and the vector-similarity list (see nearest) are fused by reciprocal
// rank, and Score is the fused score; the full-text search runs while the
// query is embedded and its neighbours are found.
func (b *Backend) Search(ctx context.Context, query string, scopes []string, k int) ([]memory.Hit, error) {
	if len(scopes) == 0 || k <= 0 {
		return nil, nil
	}
	ids, err := b.scopeIDs(ctx, rank.Dedupe(scopes))
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	if b.embedder == nil {
		lex, err := b.bm25(ctx, query, ids, k)
		if err != nil {
			return nil, err
		}
		return b.hits(ctx, lex)
	}
	n := max(4*k, 20)
	var lex []rank.Ranked
	var lexErr error
	var wg sync.WaitGroup
	wg.Go(func() { lex, lexErr = b.bm25(ctx, query, ids, n) }) // while the query is embedded
	near, err := b.embedNearest(ctx, query, ids, n)
	wg.Wait()
	if err := errors.Join(lexErr, err); err != nil {
		return nil, err
	}
	fused := rank.Fuse(lex, near)
	return b.hits(ctx, fused[:min(k, len(fused))])
}

// embedNearest embeds the query and returns its k nearest rows.
func (b *Backend) embedNearest(ctx context.Context, query string, ids []int64, k int) ([]rank.Ranked, error) {
	qv, err := b.embed(ctx, query)
	if err != nil {
		return nil, err
	}
	return b.nearest(ctx, qv, ids, k)
}

// bm25 returns the k best rows of the scopes by BM25, best first (see
// bm25Scope). The scopes are searched concurrently, each on its own
// connection, and their lists merged.
func (b *Backend) bm25(ctx context.Context, query string, ids []int64, k int) ([]rank.Ranked, error) {
	q, err := b.readQuery(ctx, query)
	if err != nil || len(q.terms) == 0 {
		return nil, err
	}
	lists := make([][]rank.Ranked, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { lists[i], errs[i] = b.bm25Scope(ctx, q, id, k, readPruned) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := slices.Concat(lists...)
	rank.Sort(out)
	return out[:min(k, len(out))], nil
}

// hits loads the entries of rs, in rs's order, scored as in rs.
func (b *Backend) hits(ctx context.Context, rs []rank.Ranked) ([]memory.Hit, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := b.stmts.hits.QueryContext(ctx, string(raw))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byRow := make(map[int64]memory.Entry, len(rs))
	for rows.Next() {
		var rowid int64
		e, err := scanEntry(rows, &rowid)
		if err != nil {
			return nil, err
		}
		byRow[rowid] = e
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]memory.Hit, 0, len(rs))
	for _, r := range rs {
		if e, ok := byRow[r.ID]; ok { // a row deleted meanwhile is no hit
			out = append(out, memory.Hit{Entry: e, Score: r.Score, Via: r.Via})
		}
	}
	return out, nil
}
