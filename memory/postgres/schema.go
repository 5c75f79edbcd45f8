package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// ErrVersion: the memory schema was written by a newer rath.
var ErrVersion = errors.New("memory/postgres: schema written by a newer version")

// ErrLanguage: the URL asks for another text-search configuration than the
// one the memory was indexed with.
var ErrLanguage = errors.New("memory/postgres: text-search language differs from the memory's")

// migrations[i] upgrades schema version i to i+1. Append only.
var migrations = []string{
	// 0 -> 1
	`CREATE SCHEMA IF NOT EXISTS rath_memory;
	CREATE TABLE rath_memory.meta(key text PRIMARY KEY, value text NOT NULL);
	CREATE TABLE rath_memory.entries(
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		uri text COLLATE "C" NOT NULL UNIQUE,
		scope text COLLATE "C" NOT NULL,
		content text NOT NULL,
		hash text NOT NULL,
		session text NOT NULL DEFAULT '',
		provenance jsonb NOT NULL,
		tsv tsvector NOT NULL);
	CREATE INDEX entries_tsv ON rath_memory.entries USING gin(tsv);
	CREATE INDEX entries_scope ON rath_memory.entries(scope);
	CREATE INDEX entries_session ON rath_memory.entries(session) WHERE session <> '';
	CREATE TABLE rath_memory.vectors(
		entry_id bigint PRIMARY KEY REFERENCES rath_memory.entries(id) ON DELETE CASCADE,
		scope text COLLATE "C" NOT NULL,
		model text NOT NULL,
		hash text NOT NULL,
		vec real[] NOT NULL,
		raw bytea NOT NULL);
	CREATE INDEX vectors_scope ON rath_memory.vectors(model, scope);`,
	// 1 -> 2: what each keyed delete deleted (forgets.go).
	`CREATE TABLE rath_memory.forgets(
		key text PRIMARY KEY,
		uris jsonb NOT NULL,
		at timestamptz NOT NULL DEFAULT now());`,
}

const schemaVersion = 2

// migrateLock is the advisory lock that serialises schema changes of
// processes opening one database at once (distinct from the store's).
const migrateLock = 0x7261746d656d // "ratmem"

// migrate brings the schema up to date and fixes or checks its language.
func migrate(ctx context.Context, conn *pgx.Conn, language string) (string, error) {
	var lang string
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		have, err := readVersion(ctx, tx)
		if err != nil {
			return err
		}
		if have > schemaVersion {
			return fmt.Errorf("%w: version %d, this build knows up to %d; upgrade rath", ErrVersion, have, schemaVersion)
		}
		for i := have; i < schemaVersion; i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate %d -> %d: %w", i, i+1, err)
			}
		}
		if have != schemaVersion {
			if _, err := tx.Exec(ctx, `INSERT INTO rath_memory.meta(key, value) VALUES('schema_version', $1)
				ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.Itoa(schemaVersion)); err != nil {
				return err
			}
		}
		// The first opener fixes the language; the tsvectors depend on it.
		if _, err := tx.Exec(ctx, `INSERT INTO rath_memory.meta(key, value) VALUES('language', $1) ON CONFLICT(key) DO NOTHING`,
			orDefault(language, defaultLanguage)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM rath_memory.meta WHERE key = 'language'`).Scan(&lang)
	})
	if err != nil {
		return "", err
	}
	if language != "" && language != lang {
		return "", fmt.Errorf("%w: it is indexed with %q, the URL asks for %q (leave language out to use the memory's)", ErrLanguage, lang, language)
	}
	return lang, nil
}

func readVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('rath_memory.meta') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var v string
	if err := tx.QueryRow(ctx, `SELECT value FROM rath_memory.meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("schema_version %q is not a number (corrupt database?)", v)
	}
	return n, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
