package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/openrath/rath/store"
)

// migrations[i] upgrades schema version i to i+1. Append only: never edit a
// migration that has shipped.
var migrations = []string{
	// 0 -> 1
	`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
	CREATE TABLE sessions(
		lane INTEGER PRIMARY KEY,
		id TEXT NOT NULL UNIQUE,
		op TEXT NOT NULL,
		lineage TEXT NOT NULL,
		status TEXT NOT NULL,
		head TEXT NOT NULL DEFAULT '',
		len INTEGER NOT NULL DEFAULT 0,
		base_lane INTEGER,
		base_len INTEGER NOT NULL DEFAULT 0,
		compact_from INTEGER NOT NULL DEFAULT 0,
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL);
	CREATE INDEX sessions_created ON sessions(created);
	CREATE INDEX sessions_base ON sessions(base_lane);
	CREATE TABLE segments(
		lane INTEGER NOT NULL,
		first INTEGER NOT NULL,
		n INTEGER NOT NULL,
		data BLOB NOT NULL,
		PRIMARY KEY(lane, first));
	CREATE TABLE parents(
		child TEXT NOT NULL,
		pos INTEGER NOT NULL,
		parent TEXT NOT NULL,
		PRIMARY KEY(child, pos));
	CREATE INDEX parents_parent ON parents(parent);
	CREATE TABLE labels(
		id TEXT NOT NULL,
		key TEXT NOT NULL,
		value TEXT NOT NULL,
		PRIMARY KEY(id, key));
	CREATE INDEX labels_kv ON labels(key, value);`,
	// 1 -> 2: the fencing epoch (see store.Fence).
	`ALTER TABLE sessions ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;`,
	// 2 -> 3: the change log other processes' watchers poll, and their
	// leases (see changelog.go).
	`CREATE TABLE changes(
		seq INTEGER PRIMARY KEY,
		origin INTEGER NOT NULL,
		events BLOB NOT NULL);
	CREATE TABLE watchers(
		origin INTEGER PRIMARY KEY,
		until INTEGER NOT NULL);`,
}

// schemaVersion is the version this build writes.
var schemaVersion = len(migrations)

// migrate brings the database to schemaVersion, refusing one written by a
// newer build.
//
// A database already at schemaVersion is only read: opening it takes no
// write lock, so a process opening a file other processes are busy writing
// does not queue behind them (SQLite's busy wait is not fair, and a writer
// waiting out a busy peer can starve).
func migrate(ctx context.Context, db *sql.DB, path string) error {
	// A read that fails otherwise (a file another process is creating
	// can answer SQLITE_BUSY without waiting) falls through to the write
	// lock, which waits.
	have, err := schemaVersionOf(ctx, db, path)
	switch {
	case errors.Is(err, store.ErrVersion):
		return err
	case err == nil && have == schemaVersion:
		return nil
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: _txlock=immediate
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Read again under the write lock: another process may have migrated.
	if have, err = schemaVersionOf(ctx, tx, path); err != nil {
		return err
	}
	for i := have; i < schemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("sqlite store %s: migrate %d -> %d: %w", path, i, i+1, err)
		}
	}
	if have < schemaVersion {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('schema_version', ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.Itoa(schemaVersion)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// rowQuerier is what schemaVersionOf reads through: a pool or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// schemaVersionOf reads the database's schema version (0 for an empty
// file), refusing one newer than this build's.
func schemaVersionOf(ctx context.Context, q rowQuerier, path string) (int, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	switch {
	case err == nil:
	case isNoTable(err):
		return 0, nil
	default:
		return 0, fmt.Errorf("sqlite store %s: read schema version: %w", path, err)
	}
	have, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("sqlite store %s: schema_version %q is not a number (corrupt database?)", path, v)
	}
	if have > schemaVersion {
		return 0, fmt.Errorf("%w: %s has schema version %d, this build knows up to %d; upgrade rath", store.ErrVersion, path, have, schemaVersion)
	}
	return have, nil
}
