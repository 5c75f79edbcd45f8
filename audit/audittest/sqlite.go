package audittest

import (
	"database/sql"
	"testing"

	"github.com/openrath/rath/session"
	_ "modernc.org/sqlite" // the database/sql driver the store uses
)

// SQLite is the database of a SQLite store at path. Close the store (or
// let its writes settle) before editing it.
func SQLite(path string) DB { return sqliteDB(path) }

type sqliteDB string

func (p sqliteDB) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+string(p)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func (p sqliteDB) Frames(t testing.TB, id session.ID) []Frame {
	t.Helper()
	db := p.open(t)
	defer db.Close()
	rows, err := db.Query(`SELECT data FROM segments WHERE lane = (SELECT lane FROM sessions WHERE id = ?) ORDER BY first`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var fs []Frame
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		fs = append(fs, decodeSegment(t, data)...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fs
}

func (p sqliteDB) Write(t testing.TB, id session.ID, fs []Frame) {
	t.Helper()
	db := p.open(t)
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var lane int64
	if err := tx.QueryRow(`SELECT lane FROM sessions WHERE id = ?`, id).Scan(&lane); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM segments WHERE lane = ?`, []any{lane}},
		{`INSERT INTO segments(lane, first, n, data) VALUES(?, 0, ?, ?)`, []any{lane, len(fs), encodeSegment(t, fs)}},
		{`UPDATE sessions SET len = ?, head = ?, compact_from = ? WHERE lane = ?`, []any{len(fs), head(fs), len(fs), lane}},
	} {
		if _, err := tx.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
