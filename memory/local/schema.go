package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrVersion: the memory database was written by a newer rath.
var ErrVersion = errors.New("memory/local: database written by a newer version")

// schemaVersion is stored in PRAGMA user_version. Version 2 partitions rowids
// by scope: an entry's rowid is its scope's id << 32 | a sequence number, so
// a recall filters by scope with a rowid range inside the full-text index.
// Version 3 adds the vectors table. Version 4 adds vector_log, where
// triggers on vectors append every inserted, replaced or deleted row, so
// that each handle's in-memory vector index catches up with the others'
// writes (see annIndex), and vector_origin, a random id of the database
// that a persisted index records, so that it is never taken for the index
// of a database created later at the same path. Version 1 (user_version 0,
// a scope_token column) is migrated on open; versions 2 and 3 gain the new
// tables and triggers (vectors written before version 4 need no log line:
// an index is always built from the table as it is, then follows the log).
// Version 5 replaces the FTS5 table with the lexical index of lexicon.go;
// versions 2–4 are indexed on open. Version 6 adds the index
// postings_impact (see lexicon.go), built on open from version 5's
// postings. Version 7 adds forgets, what each keyed delete deleted
// (forgets.go).
const schemaVersion = 7

// scopeBits is how many low rowid bits number the entries of one scope.
const scopeBits = 32

const schema = `
CREATE TABLE IF NOT EXISTS scopes(
	id INTEGER PRIMARY KEY,
	key TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS entries(
	uri TEXT NOT NULL UNIQUE,
	scope TEXT NOT NULL,
	content TEXT NOT NULL,
	session TEXT NOT NULL DEFAULT '',
	provenance TEXT NOT NULL,
	terms TEXT NOT NULL DEFAULT '{}',
	length INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS entries_session ON entries(session);
CREATE TABLE IF NOT EXISTS vectors(
	rowid INTEGER PRIMARY KEY,
	model TEXT NOT NULL,
	vec BLOB NOT NULL);
CREATE TRIGGER IF NOT EXISTS entries_vd AFTER DELETE ON entries BEGIN
	DELETE FROM vectors WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS entries_vu AFTER UPDATE OF content ON entries BEGIN
	DELETE FROM vectors WHERE rowid = old.rowid;
END;
CREATE TABLE IF NOT EXISTS vector_log(
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	entry INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS vectors_li AFTER INSERT ON vectors BEGIN
	INSERT INTO vector_log(entry) VALUES (new.rowid);
END;
CREATE TRIGGER IF NOT EXISTS vectors_lu AFTER UPDATE ON vectors BEGIN
	INSERT INTO vector_log(entry) VALUES (old.rowid);
	INSERT INTO vector_log(entry) SELECT new.rowid WHERE new.rowid != old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS vectors_ld AFTER DELETE ON vectors BEGIN
	INSERT INTO vector_log(entry) VALUES (old.rowid);
END;
CREATE TABLE IF NOT EXISTS vector_origin(id BLOB NOT NULL);
INSERT INTO vector_origin(id) SELECT randomblob(16) WHERE NOT EXISTS (SELECT 1 FROM vector_origin);`

// migrate brings the database to schemaVersion in one transaction. A
// database already there is only read, so opening it takes no write lock
// and does not queue behind processes busy writing the file.
func migrate(ctx context.Context, db *sql.DB) error {
	// A read that fails (a file another process is creating can answer
	// SQLITE_BUSY without waiting) falls through to the write lock,
	// which waits.
	var cur int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&cur); err == nil && cur == schemaVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	switch {
	case v == schemaVersion:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("%w: schema %d, this build knows %d", ErrVersion, v, schemaVersion)
	}
	var old int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'scope_token'`).Scan(&old); err != nil {
		return err
	}
	if old > 0 {
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER entries_ai; DROP TRIGGER entries_ad; DROP TRIGGER entries_au;
			DROP TABLE entries_fts; ALTER TABLE entries RENAME TO entries_v1; DROP INDEX IF EXISTS entries_scope;
			DROP INDEX IF EXISTS entries_session`); err != nil {
			return fmt.Errorf("migrating from schema 1: %w", err)
		}
	}
	unindexed := v >= 2 && v < 5 // schemas 2–4: entries without their terms
	if unindexed {
		if err := addTermColumns(ctx, tx); err != nil {
			return fmt.Errorf("migrating from schema %d: %w", v, err)
		}
	}
	if _, err := tx.ExecContext(ctx, schema+lexiconSchema+forgetsSchema); err != nil {
		return err
	}
	if unindexed {
		if err := indexTerms(ctx, tx); err != nil {
			return fmt.Errorf("migrating from schema %d: %w", v, err)
		}
	}
	if old > 0 {
		if err := copyV1(ctx, tx); err != nil {
			return fmt.Errorf("migrating from schema 1: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// copyV1 moves schema 1's entries into the partitioned table.
func copyV1(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT uri, scope, content, session, provenance FROM entries_v1 ORDER BY rowid`)
	if err != nil {
		return err
	}
	type row struct{ uri, scope, content, session, prov string }
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.uri, &r.scope, &r.content, &r.session, &r.prov); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range all {
		id, err := scopeIDTx(ctx, tx, r.scope)
		if err != nil {
			return err
		}
		rowid, err := nextRowid(ctx, tx, id)
		if err != nil {
			return err
		}
		terms, n := termsOf(r.content)
		if _, err := tx.ExecContext(ctx, `INSERT INTO entries(rowid, uri, scope, content, session, provenance, terms, length) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
			rowid, r.uri, r.scope, r.content, r.session, r.prov, terms, n); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE entries_v1`)
	return err
}

// scopeIDTx returns the id of a scope key, numbering it if new.
func scopeIDTx(ctx context.Context, tx *sql.Tx, key string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM scopes WHERE key = ?`, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `INSERT INTO scopes(key) VALUES(?) RETURNING id`, key).Scan(&id)
	}
	if err == nil && (id <= 0 || id >= 1<<(63-scopeBits)) {
		err = fmt.Errorf("scope %q: id %d out of range", key, id)
	}
	return id, err
}

// nextRowid returns the next free rowid of scope id's range.
func nextRowid(ctx context.Context, tx *sql.Tx, id int64) (int64, error) {
	lo, hi := scopeRange(id)
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(rowid) + 1, ?) FROM entries WHERE rowid BETWEEN ? AND ?`, lo, lo, hi).Scan(&next); err != nil {
		return 0, err
	}
	if next > hi {
		return 0, fmt.Errorf("scope %d holds 2^%d entries already", id, scopeBits)
	}
	return next, nil
}

// scopeRange is the rowid range of scope id.
func scopeRange(id int64) (lo, hi int64) {
	return id << scopeBits, id<<scopeBits | (1<<scopeBits - 1)
}
