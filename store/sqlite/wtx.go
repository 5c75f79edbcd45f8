package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// wtx is the writer's transaction. The writer holds its connection for its
// whole life and runs BEGIN IMMEDIATE and COMMIT on it as prepared
// statements, not through database/sql's Tx: a Tx costs a goroutine, a
// context and a fresh parse of BEGIN and COMMIT for every batch. The
// statements of the commit path are prepared once, when the writer starts,
// and reused: parsing SQL was a quarter of a commit's CPU time.
type wtx struct {
	w *writer
}

// hotStatements are prepared when the writer starts.
var hotStatements = []string{
	beginImmediate, commitSQL, rollbackSQL, `PRAGMA data_version`,
	`SAVEPOINT job`, `RELEASE job`, `ROLLBACK TO job`,
	selectHead,
	`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`,
	`SELECT data FROM segments WHERE lane = ? AND first >= ? ORDER BY first`,
	deleteTail,
	updateHead,
	`SELECT ` + laneColumns + ` FROM sessions WHERE id = ?`,
	insertSession,
	`INSERT INTO parents(child, pos, parent) VALUES(?, ?, ?)`,
	inheritScope,
	selectEpoch,
	insertChange, selectLeases,
}

const (
	beginImmediate = `BEGIN IMMEDIATE`
	commitSQL      = `COMMIT`
	rollbackSQL    = `ROLLBACK`
	selectHead     = `SELECT lane, head, len, compact_from FROM sessions WHERE id = ?`
	// inheritScope copies a parent's scope labels to a new session.
	inheritScope = `INSERT OR IGNORE INTO labels(id, key, value) SELECT ?, key, value FROM labels WHERE id = ? AND key IN (?, ?)`
)

// prepareHot prepares the hot statements on the writer's connection.
func prepareHot(ctx context.Context, conn *sql.Conn) (map[string]*sql.Stmt, error) {
	qs := append([]string(nil), hotStatements...)
	for _, k := range batchSizes {
		qs = append(qs, insertSegments(k), updateHeads(k))
	}
	out := make(map[string]*sql.Stmt, len(qs))
	for _, q := range qs {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		out[q] = st
	}
	return out, nil
}

func closeAll(stmts map[string]*sql.Stmt) {
	for _, st := range stmts {
		st.Close()
	}
}

// begin starts the batch's transaction, taking SQLite's write lock. A
// transaction left open by an earlier batch (whose ROLLBACK failed) is
// rolled back first.
func (t *wtx) begin() error {
	_, err := t.Exec(beginImmediate)
	if err != nil && strings.Contains(err.Error(), "within a transaction") {
		if err = t.rollback(); err == nil {
			_, err = t.Exec(beginImmediate)
		}
	}
	return err
}

// commit ends the transaction. A COMMIT that fails (SQLITE_BUSY, say) may
// leave it open; it is then rolled back, so the connection is clean for the
// next batch.
func (t *wtx) commit() error {
	_, err := t.Exec(commitSQL)
	if err != nil {
		if rerr := t.rollback(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// rollback undoes the transaction; that none is open (SQLite may already
// have rolled it back after an error) is not an error.
func (t *wtx) rollback() error {
	if _, err := t.Exec(rollbackSQL); err != nil && !isNoTransaction(err) {
		return err
	}
	return nil
}

func isNoTransaction(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no transaction is active")
}

// Exec runs a prepared statement (falling back to a one-off one).
func (t *wtx) Exec(q string, args ...any) (sql.Result, error) {
	if st, ok := t.w.stmts[q]; ok {
		return st.Exec(args...)
	}
	return t.w.conn.ExecContext(context.Background(), q, args...)
}

// Query runs a prepared query.
func (t *wtx) Query(q string, args ...any) (*sql.Rows, error) {
	if st, ok := t.w.stmts[q]; ok {
		return st.Query(args...)
	}
	return t.w.conn.QueryContext(context.Background(), q, args...)
}

// QueryRow runs a prepared single-row query.
func (t *wtx) QueryRow(q string, args ...any) *sql.Row {
	if st, ok := t.w.stmts[q]; ok {
		return st.QueryRow(args...)
	}
	return t.w.conn.QueryRowContext(context.Background(), q, args...)
}
