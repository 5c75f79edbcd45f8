package postgres

import (
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// A database written before the fencing epoch existed (schema version 1)
// is upgraded in place: its sessions load as before, at epoch 0, and
// take labels too long for the old index.
func TestMigrateFromVersion1(t *testing.T) {
	dbURL := freshDB(t)
	ctx := t.Context()
	st := openStore(t, dbURL)
	s := session.FromUser("written by an older rath").Append(session.Note("n"))
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	admin(t, dbURL, `ALTER TABLE rath.sessions DROP COLUMN epoch`)
	admin(t, dbURL, `UPDATE rath.meta SET value = '1' WHERE key = 'schema_version'`)

	st = openStore(t, dbURL)
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
	long := strings.Repeat("x", 20000)
	if err := st.SetLabel(ctx, s.ID(), "long", long); err != nil {
		t.Fatalf("a long label after the upgrade: %v", err)
	}
	var v string
	if err := st.Pool().QueryRow(ctx, `SELECT value FROM rath.meta WHERE key = 'schema_version'`).Scan(&v); err != nil || v != "3" {
		t.Fatalf("schema_version after the upgrade = %q, %v; want 3", v, err)
	}
}
