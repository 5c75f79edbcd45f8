package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/openrath/rath/store"
)

// migrations[i] upgrades schema version i to i+1. Append only: never edit a
// migration that has shipped.
var migrations = []string{
	// 0 -> 1
	`CREATE SCHEMA IF NOT EXISTS rath;
	CREATE TABLE rath.meta(key text PRIMARY KEY, value text NOT NULL);
	CREATE TABLE rath.sessions(
		lane bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id text NOT NULL UNIQUE,
		op text NOT NULL,
		lineage jsonb NOT NULL,
		status text NOT NULL,
		head text NOT NULL DEFAULT '',
		len integer NOT NULL DEFAULT 0,
		base_lane bigint,
		base_len integer NOT NULL DEFAULT 0,
		compact_from integer NOT NULL DEFAULT 0,
		created timestamptz NOT NULL,
		updated timestamptz NOT NULL);
	CREATE INDEX sessions_created ON rath.sessions(created);
	CREATE INDEX sessions_base ON rath.sessions(base_lane);
	CREATE TABLE rath.segments(
		lane bigint NOT NULL,
		first integer NOT NULL,
		n integer NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY(lane, first));
	CREATE TABLE rath.parents(
		child text NOT NULL,
		pos integer NOT NULL,
		parent text NOT NULL,
		PRIMARY KEY(child, pos));
	CREATE INDEX parents_parent ON rath.parents(parent);
	CREATE TABLE rath.labels(
		id text NOT NULL,
		key text NOT NULL,
		value text NOT NULL,
		PRIMARY KEY(id, key));
	CREATE INDEX labels_kv ON rath.labels(key, value);
	-- lz4 compresses segments as well as the default pglz at a fraction of
	-- its CPU (writing a million chunks takes half the time); a server built
	-- without lz4 keeps pglz.
	DO $$ BEGIN
		EXECUTE 'ALTER TABLE rath.segments ALTER COLUMN data SET COMPRESSION lz4';
	EXCEPTION WHEN OTHERS THEN NULL;
	END $$;`,
	// 1 -> 2: the fencing epoch (see store.Fence). A constant default adds
	// the column without rewriting the table.
	`ALTER TABLE rath.sessions ADD COLUMN epoch bigint NOT NULL DEFAULT 0;`,
	// 2 -> 3: labels are looked up by value only when the value is short
	// (a state, a kind, a run's id). A btree row holds at most a third of a
	// page, so indexing every value refused long ones (a record, a list)
	// outright, and cost an index entry on every rewrite of a long value.
	`DROP INDEX rath.labels_kv;
	CREATE INDEX labels_kv ON rath.labels(key, value) WHERE length(value) <= ` + shortLabel + `;`,
}

// shortLabel is the length up to which label values are indexed (and the
// predicate a query must repeat to use that index).
const (
	shortLabel    = "256"
	shortLabelLen = 256
)

// schemaVersion is the version this build writes.
var schemaVersion = len(migrations)

// migrateLock is the advisory lock key that serialises migrations ("rath").
const migrateLock = 0x72617468

// migrate brings the database to schemaVersion, refusing one written by a
// newer build. It runs under a transaction-level advisory lock, so several
// processes opening the same new database at once migrate it exactly once.
func migrate(ctx context.Context, pool *pgxpool.Pool, name string) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		have, err := readVersion(ctx, tx, name)
		if err != nil {
			return err
		}
		if have > schemaVersion {
			return fmt.Errorf("%w: %s has schema version %d, this build knows up to %d; upgrade rath", store.ErrVersion, name, have, schemaVersion)
		}
		for i := have; i < schemaVersion; i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate %d -> %d: %w", i, i+1, err)
			}
		}
		if have == schemaVersion {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO rath.meta(key, value) VALUES('schema_version', $1)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.Itoa(schemaVersion))
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrVersion) {
			return err
		}
		return fmt.Errorf("postgres store %s: %w", name, err)
	}
	return nil
}

// readVersion returns the stored schema version, 0 for a database without
// the rath schema.
func readVersion(ctx context.Context, tx pgx.Tx, name string) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('rath.meta') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v string
	err := tx.QueryRow(ctx, `SELECT value FROM rath.meta WHERE key = 'schema_version'`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%s has a rath.meta table without a schema_version (not a rath database?)", name)
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	have, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("schema_version %q is not a number (corrupt database?)", v)
	}
	return have, nil
}
