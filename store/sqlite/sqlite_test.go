package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/storetest"
)

func harness(t *testing.T, d store.Durability) storetest.Harness {
	path := filepath.Join(t.TempDir(), "rath.db")
	return storetest.Harness{
		Open: func(t *testing.T) store.Store {
			st, err := store.Open(t.Context(), "sqlite://"+path+"?durability="+string(d))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Tamper: func(t *testing.T, id session.ID, i int) { tamper(t, path, id, i) },
	}
}

func TestConformance(t *testing.T) {
	for _, d := range []store.Durability{store.Sync, store.Async, store.Exit} {
		t.Run(string(d), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness { return harness(t, d) })
		})
	}
}

// tamper edits one chunk's stored bytes with plain SQL, as an attacker or a
// bad disk would: one letter of a string value changes case.
func tamper(t *testing.T, path string, id session.ID, i int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var num int64
	if err := db.QueryRow(`SELECT lane FROM sessions WHERE id = ?`, id).Scan(&num); err != nil {
		t.Fatal(err)
	}
	var first int
	var data []byte
	if err := db.QueryRow(`SELECT first, data FROM segments WHERE lane = ? AND first <= ? ORDER BY first DESC LIMIT 1`, num, i).Scan(&first, &data); err != nil {
		t.Fatal(err)
	}
	data = storetest.TamperSegment(t, data, i-first)
	if _, err := db.Exec(`UPDATE segments SET data = ? WHERE lane = ? AND first = ?`, data, num, first); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not a database "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, Options{Path: junk})
	if err == nil || !strings.Contains(err.Error(), junk) || !strings.Contains(err.Error(), "not a valid rath database") {
		t.Fatalf("opening a junk file: %v", err)
	}
	// A database written by a newer schema is refused with ErrVersion.
	newer := filepath.Join(dir, "newer.db")
	st, err := Open(ctx, Options{Path: newer})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, _ := sql.Open("sqlite", "file:"+newer)
	if _, err := db.Exec(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, Options{Path: newer}); !errors.Is(err, store.ErrVersion) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("newer schema: %v", err)
	}
	if _, err := store.Open(ctx, "sqlite:///x.db?durability=sometimes"); err == nil {
		t.Fatal("bad durability accepted")
	}
	if _, err := store.Open(ctx, "nosuch:///x"); !errors.Is(err, store.ErrUnknownScheme) {
		t.Fatalf("unknown scheme: %v", err)
	}
}

func TestRelativeURL(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	st, err := store.Open(t.Context(), "sqlite:sub/rath.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := os.Stat(filepath.Join(dir, "sub", "rath.db")); err != nil {
		t.Fatalf("relative path not honoured: %v", err)
	}
}
