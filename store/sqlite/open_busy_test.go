package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/session"
)

// Opening a current database takes no write lock: a process opening the
// file while another holds its write lock opens it and can read. (Before,
// Open began with BEGIN IMMEDIATE and failed with SQLITE_BUSY once the
// busy timeout ran out: a cluster worker started beside busy peers died.)
func TestOpenWhileAnotherWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "rath.db")
	st, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("hello").Append(session.Note("n"))
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
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}

	st, err = Open(ctx, Options{Path: path})
	if err != nil {
		db.ExecContext(ctx, `ROLLBACK`)
		t.Fatalf("Open while another connection holds the write lock: %v", err)
	}
	got, err := st.Load(ctx, s.ID())
	if err != nil || got.Head() != s.Head() {
		t.Errorf("Load: %v", err)
	}
	// Close checkpoints, which waits for the write lock: let it go first.
	if _, err := db.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
