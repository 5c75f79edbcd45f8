package local

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// Opening a current memory database takes no write lock: it opens while
// another connection holds the file's write lock. (Before, the schema
// check ran under BEGIN IMMEDIATE and failed with SQLITE_BUSY once the busy
// timeout ran out.)
func TestOpenWhileAnotherWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memory.db")
	b, err := OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
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
	defer db.ExecContext(ctx, `ROLLBACK`)

	b, err = OpenBackend(ctx, path)
	if err != nil {
		t.Fatalf("OpenBackend while another connection holds the write lock: %v", err)
	}
	b.Close()
}
