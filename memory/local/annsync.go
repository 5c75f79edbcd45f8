package local

import (
	"context"
	"database/sql"
)

// build makes scope s's graph from the vectors table, linking it if big
// enough, and saves it.
func (a *annIndex) build(ctx context.Context, s *scopeIndex) error {
	if _, err := a.dbOrigin(ctx); err != nil {
		return err
	}
	tx, err := a.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	h, err := head(ctx, tx)
	if err != nil {
		return err
	}
	lo, hi := scopeRange(s.id)
	rows, err := tx.QueryContext(ctx, `SELECT rowid, vec FROM vectors WHERE rowid BETWEEN ? AND ? AND model = ? ORDER BY rowid`, lo, hi, a.model)
	if err != nil {
		return err
	}
	defer rows.Close()
	g := newGraph(0, a.cfg.m, a.cfg.efBuild)
	for rows.Next() {
		var key int64
		var blob []byte
		if err := rows.Scan(&key, &blob); err != nil {
			return err
		}
		g = a.put(g, key, a.model, blob)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	tx.Rollback() // the snapshot is read; do not hold it while linking
	s.g, s.seq = g, h
	a.stats.built.Add(1)
	a.relink(s)
	if s.g.linked {
		s.unsaved.Store(int64(s.g.live()) + 1)
		a.saveLater(s)
	}
	return nil
}

// put applies a row's current vector (model and blob; no model if the row
// has none) to g, returning the graph to use from now on (a new one when g
// holds no live vector and the vector's dimension differs). A vector of
// another model, malformed, of another dimension or without direction is
// no vector: an exact scan would find it similar to nothing (and the
// query, of this model's dimension, only ever meets this model's).
func (a *annIndex) put(g *graph, key int64, model string, blob []byte) *graph {
	var u []float32
	if model == a.model {
		if v, err := decodeVector(blob); err == nil {
			u = unit(v)
		}
	}
	if u != nil && len(u) != g.dims && g.live() == 0 {
		g = newGraph(len(u), a.cfg.m, a.cfg.efBuild)
	}
	if u == nil || len(u) != g.dims {
		g.remove(key)
		return g
	}
	g.upsert(key, u)
	return g
}

// apply brings scope s from its log position to the log's head: each row
// logged since is looked up and applied. If the log was pruned past s's
// position, s is compared with the whole table instead.
func (a *annIndex) apply(ctx context.Context, s *scopeIndex) error {
	tx, err := a.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var h, floor sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT max(seq) FROM vector_log), (SELECT min(seq) FROM vector_log)`).Scan(&h, &floor); err != nil {
		return err
	}
	if h.Int64 <= s.seq {
		return nil
	}
	if floor.Int64 > s.seq+1 {
		return a.reconcile(ctx, tx, s, h.Int64)
	}
	lo, hi := scopeRange(s.id)
	rows, err := tx.QueryContext(ctx, `SELECT l.entry, coalesce(v.model, ''), v.vec FROM vector_log l LEFT JOIN vectors v ON v.rowid = l.entry
		WHERE l.seq > ? AND l.seq <= ? AND l.entry BETWEEN ? AND ?`, s.seq, h.Int64, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := map[int64]bool{}
	for rows.Next() {
		var key int64
		var model string
		var blob []byte
		if err := rows.Scan(&key, &model, &blob); err != nil {
			return err
		}
		if seen[key] { // every line shows the row as it is now
			continue
		}
		seen[key] = true
		a.change(s, key, model, blob)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.seq = h.Int64
	a.relink(s)
	return nil
}

// reconcile brings scope s to log position h by comparing it with every
// vector of the scope in the table (read in tx).
func (a *annIndex) reconcile(ctx context.Context, tx *sql.Tx, s *scopeIndex, h int64) error {
	lo, hi := scopeRange(s.id)
	rows, err := tx.QueryContext(ctx, `SELECT rowid, vec FROM vectors WHERE rowid BETWEEN ? AND ? AND model = ? ORDER BY rowid`, lo, hi, a.model)
	if err != nil {
		return err
	}
	defer rows.Close()
	present := map[int64]bool{}
	for rows.Next() {
		var key int64
		var blob []byte
		if err := rows.Scan(&key, &blob); err != nil {
			return err
		}
		present[key] = true
		a.change(s, key, a.model, blob)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var gone []int64
	for key := range s.g.byKey {
		if !present[key] {
			gone = append(gone, key)
		}
	}
	for _, key := range gone {
		a.change(s, key, "", nil)
	}
	s.seq = h
	a.stats.reconciled.Add(1)
	a.relink(s)
	return nil
}

// change applies one row's current vector to scope s, counting it unsaved.
func (a *annIndex) change(s *scopeIndex, key int64, model string, blob []byte) {
	before, live := len(s.g.keys), s.g.live()
	s.g = a.put(s.g, key, model, blob)
	if len(s.g.keys) != before || s.g.live() != live {
		s.unsaved.Add(1)
	}
}

// relink links scope s's graph once it holds minGraph vectors and
// compacts it once dead nodes dominate: an unlinked graph at once, a
// linked one beside the live one (see rebuildLater).
func (a *annIndex) relink(s *scopeIndex) {
	g := s.g
	switch {
	case !g.linked && g.live() >= a.cfg.minGraph:
		if g.ndead > 0 {
			g = g.compacted()
		}
		g.linkAll()
	case g.needsCompaction() && g.linked:
		a.rebuildLater(s)
		return
	case g.needsCompaction():
		g = g.compacted()
	default:
		return
	}
	s.g = g
	s.unsaved.Add(int64(g.live()) + 1)
}
