package sqlite

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/openrath/rath/session"
)

// A database written before the fencing epoch existed (schema version 1)
// is upgraded in place: its sessions load as before, at epoch 0.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("written by an older rath").Append(session.Note("n"))
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`ALTER TABLE sessions DROP COLUMN epoch`,
		`DROP TABLE changes`,
		`DROP TABLE watchers`,
		`UPDATE meta SET value = '1' WHERE key = 'schema_version'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err = Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Load(ctx, s.ID())
	if err != nil || got.Head() != s.Head() {
		t.Fatalf("after the upgrade: %v", err)
	}
	if e, err := st.Epoch(ctx, s.ID()); err != nil || e != 0 {
		t.Fatalf("Epoch after the upgrade = %d, %v; want 0", e, err)
	}
	if e, err := st.Advance(ctx, s.ID()); err != nil || e != 1 {
		t.Fatalf("Advance after the upgrade = %d, %v; want 1", e, err)
	}
	var v string
	if err := st.rdb.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil || v != strconv.Itoa(schemaVersion) {
		t.Fatalf("schema_version after the upgrade = %q, %v; want %d", v, err, schemaVersion)
	}
}

// A database written before the change log existed (schema version 2) is
// upgraded in place, and watchers on it then see another store's writes.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("written by an older rath")
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE changes`,
		`DROP TABLE watchers`,
		`UPDATE meta SET value = '2' WHERE key = 'schema_version'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	a, b := openAt(t, path), openAt(t, path)
	events := watch(t, a)
	s2 := s.Append(session.User("after the upgrade"))
	commit(t, b, s2, s.Head())
	expect(t, events, s2, false)
	var v string
	if err := a.rdb.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil || v != strconv.Itoa(schemaVersion) {
		t.Fatalf("schema_version after the upgrade = %q, %v; want %d", v, err, schemaVersion)
	}
}
