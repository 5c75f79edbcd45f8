package local

import (
	"context"
	"database/sql"
	"errors"
)

// stmts are the write statements a Put runs, prepared once per handle:
// preparing an insert into entries compiles the lexical index's triggers,
// which would otherwise be a fifth of every write.
type stmts struct {
	update, insert *sql.Stmt
}

func prepareStmts(ctx context.Context, db *sql.DB) (*stmts, error) {
	var s stmts
	var err error
	if s.update, err = db.PrepareContext(ctx, `UPDATE entries SET content = ?, session = ?, provenance = ?, terms = ?, length = ? WHERE uri = ? RETURNING rowid`); err != nil {
		return nil, err
	}
	if s.insert, err = db.PrepareContext(ctx, `INSERT INTO entries(rowid, uri, scope, content, session, provenance, terms, length) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		s.update.Close()
		return nil, err
	}
	return &s, nil
}

func (s *stmts) close() error { return errors.Join(s.update.Close(), s.insert.Close()) }
