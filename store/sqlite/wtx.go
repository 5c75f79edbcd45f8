package sqlite

import "database/sql"

// wtx is the writer's transaction. The statements of the commit path are
// prepared once, when the writer starts, on its single connection, and
// reused: parsing SQL was a quarter of a commit's CPU time. (They cannot be
// prepared lazily: inside a transaction the one connection is taken.)
type wtx struct {
	*sql.Tx
	w *writer
}

// hotStatements are prepared when the writer starts.
var hotStatements = []string{
	`SAVEPOINT job`, `RELEASE job`, `ROLLBACK TO job`,
	`SELECT lane, head, len, compact_from FROM sessions WHERE id = ?`,
	`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`,
	updateHead,
	`SELECT ` + laneColumns + ` FROM sessions WHERE id = ?`,
	insertSession,
	`INSERT INTO parents(child, pos, parent) VALUES(?, ?, ?)`,
	selectEpoch,
}

func prepareHot(db *sql.DB) map[string]*sql.Stmt {
	qs := append([]string(nil), hotStatements...)
	for _, k := range batchSizes {
		qs = append(qs, insertSegments(k), updateHeads(k))
	}
	out := make(map[string]*sql.Stmt, len(qs))
	for _, q := range qs {
		if st, err := db.Prepare(q); err == nil {
			out[q] = st
		}
	}
	return out
}

func (t *wtx) stmt(q string) *sql.Stmt {
	if st, ok := t.w.stmts[q]; ok {
		return t.Tx.Stmt(st)
	}
	return nil
}

// Exec runs a prepared statement (falling back to a one-off one).
func (t *wtx) Exec(q string, args ...any) (sql.Result, error) {
	if st := t.stmt(q); st != nil {
		return st.Exec(args...)
	}
	return t.Tx.Exec(q, args...)
}

// Query runs a prepared query.
func (t *wtx) Query(q string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(q); st != nil {
		return st.Query(args...)
	}
	return t.Tx.Query(q, args...)
}

// QueryRow runs a prepared single-row query.
func (t *wtx) QueryRow(q string, args ...any) *sql.Row {
	if st := t.stmt(q); st != nil {
		return st.QueryRow(args...)
	}
	return t.Tx.QueryRow(q, args...)
}
